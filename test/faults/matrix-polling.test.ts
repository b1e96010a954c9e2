// The fault matrix's polling half; matrix-suite.ts says why it is halved.
import { describeMatrixHalf } from './matrix-suite.js';

describeMatrixHalf('polling');
