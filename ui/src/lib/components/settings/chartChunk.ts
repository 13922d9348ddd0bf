/**
 * The Chart.js pieces the Usage chart draws with, registered once. Imported only through
 * `chart.ts` (dynamically), so Chart.js is a chunk of its own and only these pieces are in it.
 */
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

export { Chart };
