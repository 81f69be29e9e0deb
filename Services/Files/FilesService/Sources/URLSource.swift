import AsyncHTTPClient
import Foundation
import InternalProtocol
import NIOCore
import NIOHTTP1
import ServiceRuntime

/// Fetches the source of a `{"url": …}` upload: `http` and `https` only, at most
/// ``maximumRedirects`` redirects (each hop checked again), and only hosts whose every address
/// is public (``AddressPolicy``) unless the allow-list names the host and port. The connection
/// goes to the address that was checked (the client's DNS is pinned to it), so a name that
/// resolves differently a moment later cannot redirect it inside.
///
/// Every way of not reaching the source — a refused host or port, a name that does not
/// resolve, a refused or reset connection, a timeout, a body cut short — answers the same
/// ``FileError/sourceUnreachable``, so uploads cannot tell a closed port from a forbidden one.
struct URLSource: Sendable {
    /// Hosts and ports exempt from the address check (tests, development).
    let allowList: SourceAllowList
    /// How long the source may stay silent.
    let idleTimeout: TimeAmount
    /// How long a whole fetch may take.
    static let totalTimeout = TimeAmount.hours(1)
    static let maximumRedirects = 3

    /// Hands the body of `text` to `write` as it arrives, cut with 413 past `limit` bytes.
    func fetch(
        _ text: String, limit: Int, into write: (LimitedBody<SourceBody<HTTPClientResponse.Body>>) async throws -> Int64
    ) async throws -> Int64 {
        var location = text
        for _ in 0...Self.maximumRedirects {
            let url = try check(location)
            let client = try await client(for: url)
            let outcome: Hop
            do {
                outcome = try await hop(url, client: client, limit: limit, write: write)
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
        _ url: URL, client: HTTPClient, limit: Int,
        write: (LimitedBody<SourceBody<HTTPClientResponse.Body>>) async throws -> Int64
    ) async throws -> Hop {
        let response: HTTPClientResponse
        do {
            response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: Self.totalTimeout)
        } catch {
            throw FileError.sourceUnreachable
        }
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
        let body = SourceBody(base: response.body, declaredLength: declared)
        return .fetched(try await write(LimitedBody(base: body, limit: limit, declaredLength: nil)))
    }

    /// The URL if its scheme and host are acceptable.
    private func check(_ text: String) throws(ErrorEnvelope) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { throw FileError.sourceURLRefused("only http and https URLs are fetched") }
        guard let host = url.host, !host.isEmpty else { throw FileError.sourceURLRefused("the URL names no host") }
        guard url.user == nil, url.password == nil else { throw FileError.sourceURLRefused("credentials in the URL") }
        return url
    }

    /// A client that connects `url`'s host only to an address that passed the check, or to an
    /// allowed host and port.
    private func client(for url: URL) async throws -> HTTPClient {
        let host = url.host ?? ""
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: idleTimeout)
        // A refused connection fails the fetch at once instead of being retried until the
        // connect timeout: a closed port then answers as soon as a forbidden one does.
        configuration.connectionPool.retryConnectionEstablishment = false
        if !allowList.allows(host: bare.lowercased(), port: Self.port(of: url)) {
            let addresses = try await HostResolver.addresses(of: bare)
            guard let first = addresses.first, addresses.allSatisfy({ AddressPolicy.isPublic($0.bytes) }) else {
                throw FileError.sourceUnreachable
            }
            configuration.dnsOverride = [bare: first.text]
        }
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// The port `url` connects to: its own, or its scheme's default.
    private static func port(of url: URL) -> Int {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}

/// A source's body whose failures — a reset, a timeout, an end before its declared length —
/// all end it with ``FileError/sourceUnreachable``, like failing to connect does.
struct SourceBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let declaredLength: Int?

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let declaredLength: Int?
        var count = 0

        mutating func next() async throws -> ByteBuffer? {
            let chunk: ByteBuffer?
            do {
                chunk = try await base.next()
            } catch {
                throw FileError.sourceUnreachable
            }
            guard let chunk else {
                if let declaredLength, count != declaredLength { throw FileError.sourceUnreachable }
                return nil
            }
            count += chunk.readableBytes
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), declaredLength: declaredLength)
    }
}
