export function vectorPage(root) {
  root.textContent = 'soon';
}
