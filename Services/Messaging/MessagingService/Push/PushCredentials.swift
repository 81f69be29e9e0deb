import Crypto
import DataEngine
import Foundation
import InternalProtocol
import _CryptoExtras

/// An app's APNs token-based credential (push-delivery §1.3): the `.p8` key with its 10-character
/// key id, the team id, the app's bundle id (the `apns-topic`) and the environment.
struct APNsCredential: Sendable {
    let keyId: String
    let teamId: String
    let bundleId: String
    let production: Bool
    let key: P256.Signing.PrivateKey
    /// The key as sent, the only part that is sealed.
    let pem: String

    /// What may be shown: everything but the key.
    var summary: JSONObject {
        JSONObject([
            ("keyId", .string(keyId)), ("teamId", .string(teamId)), ("bundleId", .string(bundleId)),
            ("production", .bool(production)),
        ])
    }

    /// Reads `{"keyId", "teamId", "bundleId", "privateKey": "<PEM of a P-256 key>", "production"?}`; 5011 otherwise.
    init(_ body: JSONValue?) throws(ErrorEnvelope) {
        guard let object = body?.object else { throw MessagingError.invalidBody("The body must be a JSON object") }
        keyId = try PushCredentialField.identifier(object["keyId"], "keyId")
        teamId = try PushCredentialField.identifier(object["teamId"], "teamId")
        bundleId = try PushCredentialField.text(object["bundleId"], "bundleId")
        switch object["production"] {
        case nil, .null?: production = false
        case .bool(let value)?: production = value
        default: throw MessagingError.invalidBody("'production' must be a boolean")
        }
        let pem = try PushCredentialField.text(object["privateKey"], "privateKey", upTo: 8_192)
        self.pem = pem
        key = try PushCredentialField.parse("privateKey", as: "a P-256 private key (an APNs .p8 file)") {
            try P256.Signing.PrivateKey(pemRepresentation: pem)
        }
    }

    /// The credential from its stored summary and opened key.
    init(summary: JSONObject, pem: String) throws(ErrorEnvelope) {
        var object = summary
        object["privateKey"] = .string(pem)
        try self.init(.object(object))
    }
}

/// An app's FCM HTTP v1 credential (push-delivery §2.1): a Google service account.
struct FCMCredential: Sendable {
    let projectId: String
    let clientEmail: String
    let privateKeyId: String
    /// Where the OAuth grant goes: the account's own `token_uri`.
    let tokenURI: String
    let key: _RSA.Signing.PrivateKey
    /// The key as sent, the only part that is sealed.
    let pem: String

    /// What may be shown: everything but the key.
    var summary: JSONObject {
        JSONObject([
            ("project_id", .string(projectId)), ("client_email", .string(clientEmail)),
            ("private_key_id", .string(privateKeyId)),
            ("token_uri", .string(tokenURI)),
        ])
    }

    /// Reads a service-account JSON file (`type` `service_account`, `project_id`, `client_email`,
    /// `private_key_id`, `private_key` as RSA PEM, `token_uri` over https); 5011 otherwise.
    init(_ body: JSONValue?) throws(ErrorEnvelope) {
        guard let object = body?.object else {
            throw MessagingError.invalidBody("The body must be a service-account JSON object")
        }
        if let type = object["type"], type != .string("service_account") {
            throw MessagingError.invalidBody("'type' must be 'service_account'")
        }
        projectId = try PushCredentialField.text(object["project_id"], "project_id")
        clientEmail = try PushCredentialField.text(object["client_email"], "client_email")
        privateKeyId = try PushCredentialField.text(object["private_key_id"], "private_key_id")
        tokenURI = try PushCredentialField.text(object["token_uri"], "token_uri")
        guard let url = URL(string: tokenURI), url.scheme == "https", url.host != nil else {
            throw MessagingError.invalidBody("'token_uri' must be an https URL")
        }
        let pem = try PushCredentialField.text(object["private_key"], "private_key", upTo: 16_384)
        self.pem = pem
        key = try PushCredentialField.parse("private_key", as: "an RSA private key of 2048 bits or more") {
            let key = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
            guard key.keySizeInBits >= 2048 else { throw MessagingError.invalidBody("short RSA key") }
            return key
        }
    }

    /// The credential from its stored summary and opened key.
    init(summary: JSONObject, pem: String) throws(ErrorEnvelope) {
        var object = summary
        object["private_key"] = .string(pem)
        try self.init(.object(object))
    }
}

/// Reading the members of a credential body.
enum PushCredentialField {
    /// A non-empty string of at most `limit` bytes.
    static func text(_ value: JSONValue?, _ name: String, upTo limit: Int = 1_024) throws(ErrorEnvelope) -> String {
        guard case .string(let text)? = value, !text.isEmpty, text.utf8.count <= limit else {
            throw MessagingError.invalidBody("'\(name)' must be a non-empty string of at most \(limit) bytes")
        }
        return text
    }

    /// Apple's key and team ids: 10 letters or digits.
    static func identifier(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> String {
        let text = try text(value, name)
        guard text.utf8.count == 10, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            throw MessagingError.invalidBody("'\(name)' must be 10 letters or digits")
        }
        return text
    }

    /// A key parsed by `parse`; 5011 naming what was expected when it does not parse.
    static func parse<Key>(_ name: String, as expected: String, _ parse: () throws -> Key) throws(ErrorEnvelope) -> Key
    {
        do {
            return try parse()
        } catch {
            throw MessagingError.invalidBody("'\(name)' must be \(expected) in PEM")
        }
    }
}
