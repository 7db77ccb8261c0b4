/// A self-signed certificate for `127.0.0.1` and `localhost`, with its private key, so a test can
/// run ``TestServer`` over HTTPS and HTTP/2 without generating anything.
///
/// **For tests only.** The private key is public (it is in this file), so the certificate proves
/// nothing: nothing trusts it by default, and nothing should ever be made to trust it outside a
/// test. A client that does not add it to its trust roots on purpose must refuse the server, which
/// is how a test checks that TLS verification is on.
///
/// It is a leaf without a CA: EC P-256, `CA:FALSE`, subject alternative names `IP:127.0.0.1` and
/// `DNS:localhost`, extended key usage `serverAuth`, valid from 2025-01-01 to 2125-01-01. It has no
/// key-usage extension on purpose: one without `keyCertSign` stops BoringSSL from accepting the
/// certificate as its own issuer, so no client could trust it even when told to. It was made
/// once with `openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1` and signed by its own
/// key with `openssl ca -selfsign -startdate 20250101000000Z -enddate 21250101000000Z`.
public enum TestCertificate: Sendable {
    /// The certificate, PEM-encoded: what a test client adds to its trust roots.
    public static let certificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBxjCCAW2gAwIBAgIBATAKBggqhkjOPQQDAjA7MTkwNwYDVQQDDDBDb3VyaWVy
        VGVzdFNlcnZlciB0ZXN0IGNlcnRpZmljYXRlIChuZXZlciB0cnVzdCkwIBcNMjUw
        MTAxMDAwMDAwWhgPMjEyNTAxMDEwMDAwMDBaMDsxOTA3BgNVBAMMMENvdXJpZXJU
        ZXN0U2VydmVyIHRlc3QgY2VydGlmaWNhdGUgKG5ldmVyIHRydXN0KTBZMBMGByqG
        SM49AgEGCCqGSM49AwEHA0IABB1L1VjfFUlTP0PqmQqPaYHYgPC5BTPeQlftY2ws
        2/PM4dk/A/5Im++a0D4zGLZDrtUldWg1GyKnoAPQnQmGzCijYDBeMBoGA1UdEQQT
        MBGHBH8AAAGCCWxvY2FsaG9zdDAMBgNVHRMBAf8EAjAAMBMGA1UdJQQMMAoGCCsG
        AQUFBwMBMB0GA1UdDgQWBBRYATlM/SCe3lrX2KCt1Edkh8AK4jAKBggqhkjOPQQD
        AgNHADBEAiAabqCyXd0oGlRHfykCMHjSxr7+x1GTAt2YFUPoYTynEgIgRZ1AFP8o
        2r/O+pDgWq12sD4XS+uprkWPbDWbqhiewCk=
        -----END CERTIFICATE-----
        """

    /// The certificate's private key (PKCS #8), PEM-encoded: what the server signs with.
    public static let privateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1BdrUoCSqeeOBVW/
        IuT0P/AvNh0Wm4lEbWINF3Exzs2hRANCAAQdS9VY3xVJUz9D6pkKj2mB2IDwuQUz
        3kJX7WNsLNvzzOHZPwP+SJvvmtA+Mxi2Q67VJXVoNRsip6AD0J0Jhswo
        -----END PRIVATE KEY-----
        """
}
