import Crypto
import DataEngine
import Foundation
import _CryptoExtras

/// Compact JSON Web Tokens as the push providers take them: ES256 (the raw `r ‖ s` signature
/// JWS asks for, not DER) for APNs provider tokens, RS256 (PKCS #1 v1.5 with SHA-256) for the
/// Google OAuth grant of an FCM service account.
enum JSONWebToken {
    /// `header.claims.signature` signed with an APNs key.
    static func es256(header: JSONObject, claims: JSONObject, key: P256.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)))
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// `header.claims.signature` signed with a service account's RSA key.
    static func rs256(header: JSONObject, claims: JSONObject, key: _RSA.Signing.PrivateKey) throws -> String {
        let input = signingInput(header: header, claims: claims)
        let signature = try key.signature(for: SHA256.hash(data: Data(input.utf8)), padding: .insecurePKCS1v1_5)
        return input + "." + base64URL(signature.rawRepresentation)
    }

    /// Base64url without padding (RFC 7515 §2).
    static func base64URL(_ bytes: some DataProtocol) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func signingInput(header: JSONObject, claims: JSONObject) -> String {
        base64URL(Data(JSONValue.object(header).jsonText.utf8)) + "."
            + base64URL(Data(JSONValue.object(claims).jsonText.utf8))
    }
}
