import InternalProtocol

/// A public path split once, where the gateway's router matched it, into the prefix the client
/// addressed the app by and the resource after it. Everything downstream — the key check, the
/// forwarder, the 404 message — uses these and never slices the path again.
struct PublicAddress: Sendable, Equatable {
    /// Where the request's app and key come from.
    let credentials: Credentials
    /// `/{appId}/{apiKey}`, `/api` or `/{appId}`: what answers' URLs start with.
    let prefix: String
    /// What the owning service is addressed by: the path after the prefix as the client sent it
    /// (percent-encoded), or, at the app's root, the route's own path.
    let resource: String
    /// The app id the path names, percent-decoded (nil for `/api/…` or a malformed escape).
    let appID: String?
    /// The API key the path names, percent-decoded (`/{appId}/{apiKey}/…` only).
    let apiKey: String?

    /// Splits `path` as a route matched with `credentials` reads it; `rootRoute` is the route's
    /// path when it is served at the app's root.
    init(path: String, credentials: Credentials, rootRoute: String? = nil) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let taken = credentials == .path ? 2 : 1
        let head = segments.prefix(taken)
        self.credentials = credentials
        self.prefix = "/" + head.joined(separator: "/")
        self.resource = rootRoute ?? segments.dropFirst(taken).joined(separator: "/")
        let named = credentials == .headers ? [] : Array(head)
        self.appID = named.first.flatMap(Self.decoded)
        self.apiKey = credentials == .path ? named.dropFirst().first.flatMap(Self.decoded) : nil
    }

    /// An address no route matched: its credentials are still checked before the 404.
    init(unmatched path: String) {
        let first = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().first
        self.init(path: path, credentials: first == "api" ? .headers : .path)
    }

    private static func decoded(_ segment: Substring) -> String? {
        guard let text = PercentEncoding.decode(segment), !text.isEmpty else { return nil }
        return text
    }
}
