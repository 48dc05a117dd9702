// Light and dark: the page follows the system (prefers-color-scheme) until the toggle picks
// one, which is kept in localStorage (index.html applies it before the first paint).

const KEY = 'langonrock-notes:theme';
const media = matchMedia('(prefers-color-scheme: dark)');

/** The theme on screen now. */
export function currentTheme(): 'light' | 'dark' {
  const chosen = document.documentElement.dataset.theme;
  if (chosen === 'light' || chosen === 'dark') return chosen;
  return media.matches ? 'dark' : 'light';
}

/** Picks a theme (null: follow the system again). */
export function setTheme(theme: 'light' | 'dark' | null): void {
  if (theme === null) delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  try {
    if (theme === null) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, theme);
  } catch {
    // Storage off: the choice lasts for this page only.
  }
  window.dispatchEvent(new Event('themechange'));
}

export function setupTheme(button: HTMLButtonElement): void {
  const show = () => {
    const dark = currentTheme() === 'dark';
    button.setAttribute('aria-pressed', String(dark));
    button.title = dark ? 'Dark mode is on (click for light)' : 'Dark mode is off (click for dark)';
  };
  button.addEventListener('click', () => setTheme(currentTheme() === 'dark' ? 'light' : 'dark'));
  media.addEventListener('change', show);
  window.addEventListener('themechange', show);
  show();
}
