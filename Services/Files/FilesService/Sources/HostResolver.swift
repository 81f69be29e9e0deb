import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Host names to addresses through the system resolver, on NIO's thread pool (the call blocks).
enum HostResolver {
    /// Every address of `host` as its bytes and its text, in the resolver's order; empty when
    /// the name does not resolve.
    static func addresses(of host: String) async throws -> [(bytes: [UInt8], text: String)] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
            defer { freeaddrinfo(first) }
            var found: [(bytes: [UInt8], text: String)] = []
            var entry: UnsafeMutablePointer<addrinfo>? = first
            while let current = entry {
                if let address = Self.address(current.pointee) { found.append(address) }
                entry = current.pointee.ai_next
            }
            return found
        }
    }

    /// A NUL-terminated C string's text.
    private static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func address(_ info: addrinfo) -> (bytes: [UInt8], text: String)? {
        guard let socketAddress = info.ai_addr else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch info.ai_family {
        case AF_INET:
            var address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
            return (bytes, Self.string(text))
        case AF_INET6:
            var address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
            return (bytes, Self.string(text))
        default:
            return nil
        }
    }
}
