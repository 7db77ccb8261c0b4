/// The certificate authorities a session trusts: ``Session/Configuration/trustRoots``.
public enum TrustRoots: Sendable, Hashable {
    /// The system's (on Linux the distribution's bundle, such as `/etc/ssl/certs`): the default.
    case system
    /// The system's, and these: for a private CA next to public servers.
    case systemAnd([TLSCertificate])
    /// Only these: a server must chain to one of them, whatever the system trusts.
    case only([TLSCertificate])

    /// The certificates added to or replacing the system's.
    public var certificates: [TLSCertificate] {
        switch self {
        case .system: return []
        case .systemAnd(let certificates), .only(let certificates): return certificates
        }
    }
}
