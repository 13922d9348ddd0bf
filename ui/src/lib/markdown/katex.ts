/**
 * KaTeX and its stylesheet, loaded on demand (`loadMath` in math.ts): a separate chunk that the
 * app fetches only when a message contains math.
 */
import 'katex/dist/katex.min.css';

export { default } from 'katex';
