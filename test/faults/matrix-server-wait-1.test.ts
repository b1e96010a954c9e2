// The fault matrix's server wait cells, part 1 (every other fault); matrix-suite.ts says why it is split.
import { describeMatrixPart } from './matrix-suite.js';

describeMatrixPart('server wait', 1);
