/** One line of error, as the API said it; nothing when there is none. */
export function ErrorLine({ error }: { error: string | null | undefined }) {
  if (error == null || error === '') return null;
  return (
    <p className="error-line" role="alert">
      {error}
    </p>
  );
}
