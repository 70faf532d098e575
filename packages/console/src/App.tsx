/** The console: sign-in until a token is accepted, then the pages under one navigation bar. */
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { PauseBanner, StatusProvider } from './components/PauseBanner';
import { can } from './roles';
import { SessionProvider, useSession, useSignIn } from './session';
import { teamsText } from './teams';
import { AlertsPage } from './pages/Alerts';
import { AuditPage } from './pages/Audit';
import { CalendarsPage } from './pages/Calendars';
import { DagPage } from './pages/Dag';
import { DagGridPage } from './pages/DagGrid';
import { DashboardPage } from './pages/Dashboard';
import { DeadLettersPage } from './pages/DeadLetters';
import { EnrollmentsPage } from './pages/Enrollments';
import { InstanceDetailPage } from './pages/InstanceDetail';
import { InstancesPage } from './pages/Instances';
import { RerunBatchPage } from './pages/RerunBatch';
import { RerunsPage } from './pages/Reruns';
import { SignInPage } from './pages/SignIn';
import { TaskDetailPage } from './pages/TaskDetail';
import { TaskEditorPage } from './pages/TaskEditor';
import { TasksPage } from './pages/Tasks';
import { TeamsPage } from './pages/Teams';
import { TokensPage } from './pages/Tokens';
import { WorkersPage } from './pages/Workers';

function NavLink({ href, children }: { href: string; children: string }) {
  const [location] = useLocation();
  const current = href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`);
  return (
    <li>
      <Link href={href} aria-current={current ? 'page' : undefined}>
        {children}
      </Link>
    </li>
  );
}

function Shell() {
  const { principal, signOut } = useSession();
  const teams = teamsText(principal);
  return (
    <StatusProvider>
      <header className="container-fluid topbar">
        <nav>
          <ul>
            <li>
              <Link href="/" className="brand">
                <strong>ax</strong>
              </Link>
            </li>
          </ul>
          <ul className="nav-links">
            <NavLink href="/">Dashboard</NavLink>
            <NavLink href="/tasks">Tasks</NavLink>
            <NavLink href="/instances">Instances</NavLink>
            <NavLink href="/dag">DAG</NavLink>
            <NavLink href="/reruns">Reruns</NavLink>
            <NavLink href="/alerts">Alerts</NavLink>
            {can(principal.role, 'operator') && <NavLink href="/dead-letters">Dead letters</NavLink>}
            <NavLink href="/workers">Workers</NavLink>
            <NavLink href="/teams">Teams</NavLink>
            <NavLink href="/calendars">Calendars</NavLink>
            {can(principal.role, 'admin') && <NavLink href="/audit">Audit</NavLink>}
            {/* API tokens and worker enrollments: one link, their own sub-navigation (AdminNav). */}
            {can(principal.role, 'admin') && <NavLink href="/admin">Admin</NavLink>}
          </ul>
          <ul>
            <li className="who" data-testid="who">
              {principal.name} <small>({principal.role})</small>
            </li>
            {teams !== null && (
              <li className="who-teams" data-testid="who-teams" title={teams}>
                <small>{teams}</small>
              </li>
            )}
            <li>
              <button type="button" className="secondary outline small" onClick={() => signOut()}>
                Sign out
              </button>
            </li>
          </ul>
        </nav>
      </header>
      <main className="container-fluid">
        <PauseBanner />
        <Switch>
          <Route path="/" component={DashboardPage} />
          <Route path="/tasks" component={TasksPage} />
          <Route path="/tasks/new" component={TaskEditorPage} />
          <Route path="/tasks/:name/edit" component={TaskEditorPage} />
          <Route path="/tasks/:name" component={TaskDetailPage} />
          <Route path="/instances" component={InstancesPage} />
          <Route path="/instances/:id" component={InstanceDetailPage} />
          <Route path="/dag" component={DagPage} />
          <Route path="/dag/grid" component={DagGridPage} />
          <Route path="/reruns" component={RerunsPage} />
          <Route path="/reruns/:id" component={RerunBatchPage} />
          <Route path="/alerts" component={AlertsPage} />
          <Route path="/dead-letters" component={DeadLettersPage} />
          <Route path="/workers" component={WorkersPage} />
          <Route path="/teams" component={TeamsPage} />
          <Route path="/calendars" component={CalendarsPage} />
          <Route path="/calendars/:name" component={CalendarsPage} />
          <Route path="/audit" component={AuditPage} />
          <Route path="/admin">
            <Redirect to="/admin/tokens" replace />
          </Route>
          <Route path="/admin/tokens" component={TokensPage} />
          <Route path="/admin/enrollments" component={EnrollmentsPage} />
          <Route>
            <h2>Not found</h2>
            <p>
              No page here. <Link href="/">Back to the dashboard</Link>.
            </p>
          </Route>
        </Switch>
      </main>
    </StatusProvider>
  );
}

function Gate() {
  const { session, checking } = useSignIn();
  if (checking) return <main className="container" aria-busy="true" />;
  return session === null ? <SignInPage /> : <Shell />;
}

export function App() {
  return (
    <SessionProvider>
      <Gate />
    </SessionProvider>
  );
}
