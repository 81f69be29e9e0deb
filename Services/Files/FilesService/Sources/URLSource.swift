import AsyncHTTPClient
import Foundation
import InternalProtocol
import NIOCore
import NIOHTTP1
import ServiceRuntime

/// Fetches the source of a `{"url": …}` upload: `http` and `https` only, at most
/// ``maximumRedirects`` redirects (each hop checked again), and only hosts whose every address
/// is public (``AddressPolicy``) unless the allow-list names them. The connection goes to the
/// address that was checked (the client's DNS is pinned to it), so a name that resolves
/// differently a moment later cannot redirect it inside.
struct URLSource: Sendable {
    /// Host names or address literals exempt from the address check (tests, development).
    let allowedHosts: Set<String>
    /// How long the source may stay silent.
    let idleTimeout: TimeAmount
    /// How long a whole fetch may take.
    static let totalTimeout = TimeAmount.hours(1)
    static let maximumRedirects = 3

    /// Hands the body of `text` to `write` as it arrives, cut with 413 past `limit` bytes.
    func fetch(
        _ text: String, limit: Int, into write: (LimitedBody<HTTPClientResponse.Body>) async throws -> Int64
    ) async throws -> Int64 {
        var location = text
        for _ in 0...Self.maximumRedirects {
            let url = try check(location)
            let client = try await client(for: url)
            let outcome: Hop
            do {
                outcome = try await hop(url, client: client, limit: limit, write: write)
            } catch let error as HTTPClientError {
                try? await client.shutdown()
                throw FileError.sourceURLFailed("\(error)")
            } catch {
                try? await client.shutdown()
                throw error
            }
            try? await client.shutdown()
            switch outcome {
            case .redirect(let next): location = next
            case .fetched(let size): return size
            }
        }
        throw FileError.sourceURLRefused("more than \(Self.maximumRedirects) redirects")
    }

    /// Where one request ended: a redirect to follow, or the body stored.
    private enum Hop {
        case redirect(String)
        case fetched(Int64)
    }

    /// One request; a redirect's body is left unread (its connection goes with the client).
    private func hop(
        _ url: URL, client: HTTPClient, limit: Int, write: (LimitedBody<HTTPClientResponse.Body>) async throws -> Int64
    ) async throws -> Hop {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: Self.totalTimeout)
        if (300..<400).contains(response.status.code), let next = response.headers.first(name: "location") {
            guard let resolved = URL(string: next, relativeTo: url)?.absoluteString else {
                throw FileError.sourceURLFailed("a redirect to an unreadable location")
            }
            return .redirect(resolved)
        }
        guard (200..<300).contains(response.status.code) else {
            throw FileError.sourceURLFailed("it answered \(response.status.code)")
        }
        let declared = response.headers.first(name: "content-length").flatMap(Int.init)
        if let declared, declared > limit { throw ErrorEnvelope.payloadTooLarge(limit: limit) }
        return .fetched(try await write(LimitedBody(base: response.body, limit: limit, declaredLength: declared)))
    }

    /// The URL if its scheme and host are acceptable.
    private func check(_ text: String) throws(ErrorEnvelope) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { throw FileError.sourceURLRefused("only http and https URLs are fetched") }
        guard let host = url.host, !host.isEmpty else { throw FileError.sourceURLRefused("the URL names no host") }
        guard url.user == nil, url.password == nil else { throw FileError.sourceURLRefused("credentials in the URL") }
        return url
    }

    /// A client that connects `url`'s host only to an address that passed the check.
    private func client(for url: URL) async throws -> HTTPClient {
        let host = url.host ?? ""
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: idleTimeout)
        if !allowedHosts.contains(bare.lowercased()) {
            let addresses = try await HostResolver.addresses(of: bare)
            guard let first = addresses.first else { throw FileError.sourceURLFailed("'\(bare)' does not resolve") }
            guard addresses.allSatisfy({ AddressPolicy.isPublic($0.bytes) }) else {
                throw FileError.sourceURLRefused("'\(bare)' is not a public address")
            }
            configuration.dnsOverride = [bare: first.text]
        }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}
