/** The sub-navigation of the admin section (API tokens, worker enrollments), shown atop each of its pages. */
import { Link, useLocation } from 'wouter';

const SECTIONS = [
  { href: '/admin/tokens', label: 'API tokens' },
  { href: '/admin/enrollments', label: 'Worker enrollments' },
] as const;

export function AdminNav() {
  const [location] = useLocation();
  return (
    <nav className="admin-nav" aria-label="Admin">
      <ul>
        {SECTIONS.map((s) => (
          <li key={s.href}>
            <Link href={s.href} aria-current={location === s.href ? 'page' : undefined}>
              {s.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}
