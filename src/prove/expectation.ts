/** What the receiver should show for a resource once everything prove sent has settled. */
export interface Expectation {
  count: number;
  /** The last state, when the resource should have one (absent for events that must be refused). */
  state?: string;
  check: string;
}
