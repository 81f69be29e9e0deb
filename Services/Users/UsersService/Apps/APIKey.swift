import Crypto
import Foundation

/// Backendless-form identifiers: upper-case hyphenated UUIDs (version 4) from the system's
/// cryptographic random source, and the hash under which keys are stored.
enum APIKey {
    /// A new random identifier, e.g. `6C77C11B-E9B3-4B14-AFA2-69F38CF48800`.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuid.uuidString
    }

    /// The stored form of a key: hex SHA-256 of its upper-case text. Keys carry 122 random
    /// bits, so a fast hash suffices; the database never holds a usable key.
    static func hash(_ key: String) -> String {
        SHA256.hash(data: Data(key.uppercased().utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
