import Foundation
import HummingbirdBcrypt
import NIOPosix

/// Slow password hashing: bcrypt at a configured cost, run on NIO's blocking thread pool so
/// a hash never stalls an event loop.
struct PasswordHasher: Sendable {
    /// The bcrypt cost (work factor 2^cost); production default 11.
    let cost: UInt8
    /// A hash at the same cost that no password matches, verified when a login names nobody so
    /// that unknown and known identities take the same time.
    let decoy: String

    /// A hasher at `cost` (computes its decoy once, blocking).
    init(cost: UInt8) {
        self.cost = cost
        decoy = Bcrypt.hash(SessionToken.generate(), cost: cost)
    }

    /// A salted hash of `password`.
    func hash(_ password: String) async throws -> String {
        let cost = cost
        return try await NIOThreadPool.singleton.runIfActive { Bcrypt.hash(password, cost: cost) }
    }

    /// Whether `password` matches `hash` (bcrypt compares in constant time).
    func verify(_ password: String, hash: String) async throws -> Bool {
        try await NIOThreadPool.singleton.runIfActive { Bcrypt.verify(password, hash: hash) }
    }
}

/// Session tokens: 128 random bits rendered in the contract's upper-case UUID form, stored only
/// as their SHA-256, so the sessions table holds nothing usable as a token.
enum SessionToken {
    /// A new token.
    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let hex = (0..<16).map { _ in String(format: "%02X", UInt8.random(in: .min ... .max, using: &generator)) }
            .joined()
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
            String(
                hex[
                    hex.index(
                        hex.startIndex, offsetBy: range.lowerBound)..<hex.index(
                            hex.startIndex, offsetBy: range.upperBound)])
        }
        return groups.joined(separator: "-")
    }

    /// The stored form, as for API keys: hex SHA-256 of the upper-cased token.
    static func hash(_ token: String) -> String {
        APIKey.hash(token)
    }
}
