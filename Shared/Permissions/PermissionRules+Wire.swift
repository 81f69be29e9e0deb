/// ``PermissionRules`` on the internal protocol: flat lists of cells, owner policies and ACL
/// usage, so the JSON is stable and readable (no enum-keyed dictionaries).
extension PermissionRules: Codable {
    /// One table or global cell (`table` empty for the global matrix).
    struct Cell: Codable, Equatable {
        var table: String
        var kind: String
        var principal: String
        var operation: DataOperation
        var decision: PermissionDecision
    }

    /// One owner-policy cell or (`decision` absent) one ACL usage pair.
    struct TableOperation: Codable, Equatable {
        var table: String
        var operation: DataOperation
        var decision: PermissionDecision?
    }

    enum CodingKeys: String, CodingKey {
        case cells, owner, aclOperations
    }

    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        for cell in try container.decode([Cell].self, forKey: .cells) {
            guard let principal = Principal(kind: cell.kind, name: cell.principal) else {
                throw DecodingError.dataCorruptedError(forKey: .cells, in: container, debugDescription: "principal kind")
            }
            if cell.table.isEmpty {
                global.set(principal, cell.operation, cell.decision)
            } else {
                tables[cell.table, default: PermissionCells()].set(principal, cell.operation, cell.decision)
            }
        }
        for policy in try container.decode([TableOperation].self, forKey: .owner) {
            owner[policy.table, default: [:]][policy.operation] = policy.decision
        }
        for usage in try container.decode([TableOperation].self, forKey: .aclOperations) {
            aclOperations[usage.table, default: []].insert(usage.operation)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let named = [("", global)] + tables.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let cells = named.flatMap { table, cells in
            cells.all.map {
                Cell(
                    table: table, kind: $0.principal.parts.kind, principal: $0.principal.parts.name, operation: $0.operation,
                    decision: $0.decision)
            }
        }
        try container.encode(cells, forKey: .cells)
        try container.encode(Self.pairs(owner.mapValues { $0.map { (key: $0.key, value: Optional($0.value)) } }), forKey: .owner)
        try container.encode(Self.pairs(aclOperations.mapValues { $0.map { (key: $0, value: nil) } }), forKey: .aclOperations)
    }

    private static func pairs(_ byTable: [String: [(key: DataOperation, value: PermissionDecision?)]]) -> [TableOperation] {
        byTable.flatMap { table, entries in
            entries.map { TableOperation(table: table, operation: $0.key, decision: $0.value) }
        }
        .sorted { ($0.table, $0.operation.rawValue) < ($1.table, $1.operation.rawValue) }
    }
}
