/// Which network addresses an upload from a URL may reach: public unicast only. Loopback,
/// private, link-local (cloud metadata at 169.254.169.254 among them), shared, reserved and
/// multicast ranges could reach inside the deployment.
enum AddressPolicy {
    /// Whether `bytes` (4 for IPv4, 16 for IPv6) is a public unicast address.
    static func isPublic(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return isPublicV4(bytes)
        case 16: return isPublicV6(bytes)
        default: return false
        }
    }

    private static func isPublicV4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false  // shared address space (carrier NAT)
        case (169, 254): return false  // link-local, cloud metadata
        case (172, 16...31), (192, 168): return false
        case (192, 0) where b[2] == 0 || b[2] == 2: return false  // IETF assignments, documentation
        case (198, 51) where b[2] == 100, (203, 0) where b[2] == 113: return false  // documentation
        case (198, 18...19): return false  // benchmarking
        case (224...255, _): return false  // multicast, reserved, broadcast
        default: return true
        }
    }

    private static func isPublicV6(_ b: [UInt8]) -> Bool {
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF {
            return isPublicV4(Array(b[12..<16]))  // IPv4-mapped
        }
        if b[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] {
            return isPublicV4(Array(b[12..<16]))  // NAT64
        }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return false }  // unspecified, loopback, IPv4-compatible
        if b[0] == 0x20 && b[1] == 0x02 { return isPublicV4(Array(b[2..<6])) }  // 6to4
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8 { return false }  // documentation
        if b[0..<6] == [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01] { return false }  // local-use NAT64
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return false }  // site-local (deprecated)
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return false }  // link-local
        if b[0] & 0xFE == 0xFC { return false }  // unique local
        if b[0] == 0xFF { return false }  // multicast
        return true
    }
}
