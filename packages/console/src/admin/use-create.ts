/**
 * The submit of an admin create form (a token, a worker enrollment): disables the form while the POST
 * runs, shows the refusal (failureText) on the form, and hands what the API created to the page, which
 * shows its secret once (SecretOnce). `post` reads the form's current fields; `onCreated` also clears them.
 */
import { useState, type FormEvent } from 'react';
import { failureText } from './failure';

export interface CreateForm {
  error: string | null;
  saving: boolean;
  submit: (e: FormEvent) => void;
}

export function useCreate<T>(post: () => Promise<T>, onCreated: (created: T) => void): CreateForm {
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaving(true);
    post()
      .then((created) => {
        setError(null);
        onCreated(created);
      })
      .catch((err: unknown) => setError(failureText(err)))
      .finally(() => setSaving(false));
  };
  return { error, saving, submit };
}
