// The core's public surface. Every export is listed explicitly.
export {};
