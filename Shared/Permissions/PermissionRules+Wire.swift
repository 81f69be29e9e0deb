/// ``ContainerPermissions`` on the internal protocol: flat lists of cells, owner policies and ACL
/// usage, so the JSON is stable and readable (no enum-keyed dictionaries).
extension ContainerPermissions: Codable {
    /// One container or global cell (`container` empty for the global matrix).
    struct Cell: Codable, Equatable {
        var container: String
        var kind: String
        var principal: String
        var operation: Operation
        var decision: PermissionDecision
    }

    /// One owner-policy cell or (`decision` absent) one ACL usage pair.
    struct ContainerOperation: Codable, Equatable {
        var container: String
        var operation: Operation
        var decision: PermissionDecision?
    }

    enum CodingKeys: String, CodingKey {
        case cells, owner, aclOperations
    }

    package init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for cell in try container.decode([Cell].self, forKey: .cells) {
            guard let principal = Principal(kind: cell.kind, name: cell.principal) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .cells, in: container, debugDescription: "principal kind")
            }
            if cell.container.isEmpty {
                global.set(principal, cell.operation, cell.decision)
            } else {
                containers[cell.container, default: PermissionMatrix<Operation>()].set(
                    principal, cell.operation, cell.decision)
            }
        }
        for policy in try container.decode([ContainerOperation].self, forKey: .owner) {
            owner[policy.container, default: [:]][policy.operation] = policy.decision
        }
        for usage in try container.decode([ContainerOperation].self, forKey: .aclOperations) {
            aclOperations[usage.container, default: []].insert(usage.operation)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let named = [("", global)] + containers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let cells = named.flatMap { name, cells in
            cells.all.map {
                Cell(
                    container: name, kind: $0.principal.parts.kind, principal: $0.principal.parts.name,
                    operation: $0.operation,
                    decision: $0.decision)
            }
        }
        try container.encode(cells, forKey: .cells)
        try container.encode(
            Self.pairs(owner.mapValues { $0.map { (key: $0.key, value: Optional($0.value)) } }), forKey: .owner)
        try container.encode(
            Self.pairs(aclOperations.mapValues { $0.map { (key: $0, value: nil) } }), forKey: .aclOperations)
    }

    private static func pairs(_ byContainer: [String: [(key: Operation, value: PermissionDecision?)]])
        -> [ContainerOperation]
    {
        byContainer.flatMap { name, entries in
            entries.map { ContainerOperation(container: name, operation: $0.key, decision: $0.value) }
        }
        .sorted { ($0.container, $0.operation.rawValue) < ($1.container, $1.operation.rawValue) }
    }
}
