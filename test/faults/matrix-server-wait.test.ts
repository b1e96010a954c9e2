// The fault matrix's server wait half; matrix-suite.ts says why it is halved.
import { describeMatrixHalf } from './matrix-suite.js';

describeMatrixHalf('server wait');
