/**
 * Chart.js for the Usage chart, loaded the first time the chart is drawn (its own chunk: nothing
 * of it is in the first paint, nor in the Settings chunk). Only the pieces a stacked bar chart
 * needs are registered (`chartChunk.ts`), so the chunk stays small.
 */
import { loadOnce } from '../../util/loadOnce';

export const loadChart = loadOnce(async () => (await import('./chartChunk')).Chart);
