/// One committed write as change readers read it (``ChangeSlot``, ``ChangeRecord``): what happened to which
/// table's objects, and where in the database's commit order it happened.
package struct ChangeEvent: Sendable {
    /// What happened, named as real-time subscriptions name it.
    package enum Kind: String, Sendable, CaseIterable {
        case created, updated, upserted, deleted
        case bulkCreated = "bulk-created", bulkUpdated = "bulk-updated", bulkDeleted = "bulk-deleted"
        case bulkUpserted = "bulk-upserted"
    }

    /// An object a bulk update or delete touched.
    package struct Touched: Sendable, Equatable {
        package var objectId: String
        package var ownerId: String?
    }

    package var app: String
    package var table: String
    package var kind: Kind
    /// created, updated, upserted: the object as REST answers it, but with `FILE_REF` values as
    /// paths (a URL would carry the writer's API key); deleted: the object as it was;
    /// bulk-created and bulk-upserted: every object written.
    package var objects: [JSONObject]
    /// bulk-updated, bulk-deleted: the operation's where clause as BQL (nil: every row).
    package var whereClause: String?
    /// How many objects the write touched.
    package var count: Int
    /// bulk-updated, bulk-deleted: the objects touched, or nil when there were more than the
    /// event lists.
    package var touched: [Touched]?
    /// The event's place in commit order.
    package var position: ChangePosition

    /// Reads a record's JSON (``ChangeEvents``'s shape); nil for anything else.
    package init?(_ record: ChangeRecord) {
        guard let json = try? JSONParser.parse(Array(record.content.utf8), maximumDepth: 512), let event = json.object,
            let kind = event["event"]?.string.flatMap(Kind.init(rawValue:))
        else { return nil }
        app = record.app
        table = record.table
        self.kind = kind
        position = record.position
        whereClause = event["whereClause"]?.string
        if let object = event["object"]?.object {
            objects = [object]
        } else {
            objects = event["objects"]?.array?.compactMap(\.object) ?? []
        }
        count = Int(event["count"]?.integerValue ?? Int64(objects.count))
        touched = event["touched"]?.array.flatMap { pairs in
            guard pairs.count <= ChangeEvents.touchedLimit else { return nil }
            return pairs.compactMap { pair in
                guard let id = pair.array?.first?.string else { return nil }
                return Touched(objectId: id, ownerId: pair.array?.dropFirst().first?.string)
            }
        }
        if touched == nil, kind == .bulkUpdated || kind == .bulkDeleted, count == 0 { touched = [] }
    }

    /// The single object's id (created, updated, upserted, deleted).
    package var objectId: String? { objects.first?["objectId"]?.string }
}

/// A place in the database's commit order: the committing transaction's log position, then
/// the event's order within it. Positions of one database compare the same in every reader.
package struct ChangePosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The commit record's log sequence number.
    package var commit: UInt64
    /// The event's order inside its transaction.
    package var index: Int

    package init(commit: UInt64, index: Int) {
        self.commit = commit
        self.index = index
    }

    package static func < (lhs: ChangePosition, rhs: ChangePosition) -> Bool {
        (lhs.commit, lhs.index) < (rhs.commit, rhs.index)
    }

    /// `<hex commit>-<index>`, the form clients may hand back.
    package var description: String { String(commit, radix: 16, uppercase: true) + "-" + String(index) }

    /// Reads ``description``'s form.
    package init?(_ text: String) {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let commit = UInt64(parts[0], radix: 16), let index = Int(parts[1]) else { return nil }
        self.init(commit: commit, index: index)
    }
}
