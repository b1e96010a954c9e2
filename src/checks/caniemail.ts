// caniemail (its code and the caniemail.com data), as the html check loads
// it. The package is a build-time dependency: `npm run build` replaces this
// file's JavaScript with a bundle of it (scripts/bundle-caniemail.ts), so a
// user installs neither it nor what it pulls in (46 packages, 31 MB, Babel and
// Prettier among them), and no `engines` warning on Node 20 (caniemail 2.x
// asks for Node 22, though its README says 20.19 and it runs on 20).
export { caniemail, rawData } from 'caniemail';
