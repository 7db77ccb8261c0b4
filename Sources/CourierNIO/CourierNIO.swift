import AsyncHTTPClient
import Courier

// The AsyncHTTPClient transport lands with the core issue. This target exists now so the
// package's shape, and its dependency on AsyncHTTPClient, are fixed from the start.
