import Foundation

/// Who the client is, for per-address limits.
package enum ClientAddress {
    /// The TCP peer, or — when the peer is a trusted proxy — the rightmost `X-Forwarded-For`
    /// entry that is not itself a trusted proxy (entries further left are the client's word).
    package static func resolve(peer: String?, forwardedFor: String?, trusted: Set<String>) -> String? {
        guard let peer, trusted.contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        return hops.last { !trusted.contains($0) && !$0.isEmpty } ?? peer
    }
}
