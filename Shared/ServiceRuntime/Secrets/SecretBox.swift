import Configuration
import Crypto
import Foundation

/// Seals secrets for storage (push credentials, …) with AES-256-GCM under the key configured as
/// `BAAS_SECRETS_KEY` (32 random bytes, base64). Each sealed value is bound to what it belongs
/// to (its `context`, authenticated but not stored), so a value copied to another app's row does
/// not open there. The text form is `v1.` + base64(nonce ‖ ciphertext ‖ tag); the version leaves
/// room for a key rotation.
package struct SecretBox: Sendable {
    private let key: SymmetricKey

    /// A box sealing with `key` (32 bytes).
    package init(key: SymmetricKey) {
        self.key = key
    }

    /// Why a sealed value does not open.
    package struct Unopenable: Error, CustomStringConvertible {
        package let description = "The sealed secret does not open with this key and context"
    }

    /// The configured box, or nil when `BAAS_SECRETS_KEY` is unset or empty.
    package static func read(_ reader: ConfigReader) throws -> SecretBox? {
        guard let text = reader.string(forKey: "secrets.key", isSecret: true), !text.isEmpty else { return nil }
        guard let bytes = Data(base64Encoded: text), bytes.count == 32 else {
            throw UsageError("BAAS_SECRETS_KEY must be 32 bytes in base64 (openssl rand -base64 32)")
        }
        return SecretBox(key: SymmetricKey(data: bytes))
    }

    /// `plaintext` sealed for `context`.
    package func seal(_ plaintext: String, context: String) throws -> String {
        let box = try AES.GCM.seal(Data(plaintext.utf8), using: key, authenticating: Data(context.utf8))
        guard let combined = box.combined else { throw Unopenable() }
        return "v1." + combined.base64EncodedString()
    }

    /// The plaintext of a value sealed for `context`; ``Unopenable`` when it was sealed for
    /// another context or key, or altered.
    package func open(_ sealed: String, context: String) throws -> String {
        guard sealed.hasPrefix("v1."), let combined = Data(base64Encoded: String(sealed.dropFirst(3))) else {
            throw Unopenable()
        }
        do {
            let box = try AES.GCM.SealedBox(combined: combined)
            let plaintext = try AES.GCM.open(box, using: key, authenticating: Data(context.utf8))
            return String(decoding: plaintext, as: UTF8.self)
        } catch {
            throw Unopenable()
        }
    }
}
