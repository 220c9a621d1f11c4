import { type Html, html } from './html';
import { page } from './layout';

/** The login form (ADMIN_USERS; API keys do not open the operations surface). */
export function loginView(opts: { next: string; user?: string; error?: string }): Html {
  return page(
    'Log in',
    { session: null },
    html`<div class="login">
  <h1>cardpull operations</h1>
  ${opts.error ? html`<div class="alert" role="alert">${opts.error}</div>` : ''}
  <form method="post" action="/admin/login">
    <input type="hidden" name="next" value="${opts.next}">
    <label for="user">User</label>
    <input id="user" name="user" autocomplete="username" value="${opts.user ?? ''}" required autofocus>
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <button class="primary" type="submit">Log in</button>
  </form>
  <p class="muted small">Users come from ADMIN_USERS; a viewer sees everything and changes nothing.</p>
</div>`,
  );
}
