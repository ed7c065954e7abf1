/** The question `deployments delete` asks on a terminal, worded for one deployment or several. */
export function deletePrompt(targets: Array<{ name: string; id: string }>): string {
  const listed = targets.map((d) => `${d.name} (${d.id})`).join(", ");
  return targets.length === 1
    ? `Delete the deployment ${listed}, with its revisions, logs and data?`
    : `Delete the ${targets.length} deployments ${listed}, with their revisions, logs and data?`;
}
