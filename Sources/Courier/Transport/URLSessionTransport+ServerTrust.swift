@_spi(CourierTransport)
extension URLSessionTransport: ServerTrustEnforcing {
    /// Every policy (a session hands none that asks only for the default checks): FoundationNetworking (URLSession on
    /// Linux) has no trust API at all, and on Apple platforms this transport does not answer
    /// server-trust challenges yet. A request with trust settings fails before connecting rather
    /// than go out unchecked.
    public func cannotEnforce(_ policy: ServerTrustPolicy) -> String? {
        #if canImport(FoundationNetworking)
        return "FoundationNetworking (URLSession on Linux) has no trust API; use the AsyncHTTPClient transport"
        #else
        return "Courier's URLSession transport does not apply trust settings yet; use the AsyncHTTPClient transport"
        #endif
    }
}
