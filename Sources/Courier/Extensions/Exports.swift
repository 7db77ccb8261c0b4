// Courier's API speaks URLRequest and HTTPURLResponse, which live in FoundationNetworking on
// Linux: re-exporting it means `import Courier` is enough there too, as on Apple platforms.
@_exported import Foundation

#if canImport(FoundationNetworking)
@_exported import FoundationNetworking
#endif
