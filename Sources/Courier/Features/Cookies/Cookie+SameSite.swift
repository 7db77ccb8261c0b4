extension Cookie {
    /// A cookie's `SameSite` attribute (RFC 6265bis §5.6.7): whether a browser would send it on
    /// requests from other sites.
    public enum SameSite: String, Sendable, Hashable, CustomStringConvertible {
        /// `SameSite=Strict`: only on requests from the cookie's own site.
        case strict = "Strict"
        /// `SameSite=Lax`: also on top-level navigations from other sites.
        case lax = "Lax"
        /// `SameSite=None`: on every request (browsers require `Secure` with it).
        case none = "None"

        /// The attribute's value as written in `Set-Cookie` (`Strict`, `Lax`, `None`).
        public var description: String { rawValue }
    }
}
