// The fault matrix's polling cells, part 2 (every other fault); matrix-suite.ts says why it is split.
import { describeMatrixPart } from './matrix-suite.js';

describeMatrixPart('polling', 2);
