// The embedded mail server's public surface.
export {};
