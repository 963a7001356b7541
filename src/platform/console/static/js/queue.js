export function queuePage(root) {
  root.textContent = 'soon';
}
