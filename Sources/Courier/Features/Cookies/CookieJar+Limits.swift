extension CookieJar {
    /// How many cookies a ``CookieJar`` keeps before it evicts the least recently used.
    ///
    /// The defaults are RFC 6265 §6.1's minimums a user agent should support, which browsers use
    /// as their limits too.
    public struct Limits: Sendable, Hashable {
        /// The most cookies kept for one domain; default 50.
        public var cookiesPerDomain: Int
        /// The most cookies kept in all; default 3,000.
        public var totalCookies: Int

        /// Limits with the given counts (negative counts are taken as zero: nothing is kept).
        public init(cookiesPerDomain: Int = 50, totalCookies: Int = 3_000) {
            self.cookiesPerDomain = max(0, cookiesPerDomain)
            self.totalCookies = max(0, totalCookies)
        }
    }
}
