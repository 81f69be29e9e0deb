/// The seven processes of the platform.
package enum ServiceName: String, Codable, Sendable, CaseIterable, Hashable {
    case gateway, users, data, relations, messaging, files, geo

    /// The executable's name, also the common name in its internal TLS certificate and its
    /// host name in docker-compose.
    package var executable: String {
        self == .gateway ? "gateway" : "\(rawValue)-service"
    }

    /// Finds a service by executable name (`data-service`) or short name (`data`).
    package init?(executable: String) {
        guard let match = Self.allCases.first(where: { $0.executable == executable || $0.rawValue == executable })
        else { return nil }
        self = match
    }

    /// The services behind the gateway.
    package static let backends: [ServiceName] = allCases.filter { $0 != .gateway }
}
