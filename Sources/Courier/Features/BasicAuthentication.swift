import Foundation

/// HTTP Basic credentials (RFC 7617), written as an `Authorization` value only when the server
/// will read back what was meant.
///
/// Basic joins the user name and password with a `:` and the server splits at the first one, so
/// a user name holding one would arrive as another user name and password; control characters
/// are not allowed in either. URLSession sends such credentials anyway; Courier fails the request
/// with ``CourierError/Kind/credentialEncodingFailed`` instead, whether the credential answers a
/// challenge or comes from the URL's user info.
enum BasicAuthentication {
    /// `Basic` and the base64 of `user:password` in UTF-8.
    ///
    /// - Throws: ``CourierError/Kind/credentialEncodingFailed`` when `user` holds a `:` or either
    ///   holds a control character.
    static func authorization(user: String, password: String) throws(CourierError) -> String {
        if user.utf8.contains(UInt8(ascii: ":")) { throw .credentialEncodingFailed(.colonInBasicUserName) }
        if containsControlCharacter(user) || containsControlCharacter(password) {
            throw .credentialEncodingFailed(.controlCharacterInBasicCredential)
        }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// Whether `text` holds a C0 or C1 control character, or DEL.
    private static func containsControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
