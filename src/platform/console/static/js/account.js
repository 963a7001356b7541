export function accountPage(root) {
  root.textContent = 'soon';
}
