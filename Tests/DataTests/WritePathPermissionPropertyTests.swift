import DataEngine
import Foundation
import InternalProtocol
import Permissions
import QueryLanguage
import TestSupport
import Testing

/// Every path of the data engine that can change or reveal a row takes the one permission
/// decision for that row, property-based. Random worlds — table, global, owner-policy and
/// object-ACL cells on `Doc` for Find, Update, Remove, Permission, LoadRelations, AddRelation and
/// DeleteRelation; docs owned round-robin; a caller anonymous or logged in, with custom roles,
/// through the REST or JS key — and in each world every path against ``PermissionOracle``: a write
/// changes exactly the rows the oracle lets the caller change (Update, Remove, the relation
/// operations, Permission), and an answer shows exactly the rows it lets the caller find (or, for
/// a write, change). A request may be refused whole (1023) only where the oracle denies every row.
/// A path that dropped its grant would change or show a row the oracle denies:
/// `Deploy/mutation-check.sh` drops it from each path in turn and expects this suite to fail.
/// `WRITE_PATH_TEST_SEED` repeats a run; every failure names its seed, its world and its path.
@Suite(.timeLimit(.minutes(20))) struct WritePathPermissionPropertyTests {
    /// `WRITE_PATH_TEST_SEED`, else a fixed seed, so that every run checks the same worlds.
    static let seed = ProcessInfo.processInfo.environment["WRITE_PATH_TEST_SEED"].flatMap { UInt64($0) } ?? 20_250_611
    /// Worlds per test: `WRITE_PATH_TEST_WORLDS`, else 40.
    static let worldCount = ProcessInfo.processInfo.environment["WRITE_PATH_TEST_WORLDS"].flatMap { Int($0) } ?? 40

    @Test func readsRevealExactlyTheRowsTheOracleLetsTheCallerFind() async throws {
        try await forEachWorld(relink: false) { try await $0.checkReads() }
    }

    @Test func writesChangeExactlyTheRowsTheOracleLetsTheCallerUpdate() async throws {
        try await forEachWorld(relink: false) { try await $0.checkWrites() }
    }

    @Test func relationChangesAndDeepSavesFollowTheOracle() async throws {
        try await forEachWorld(relink: true) { try await $0.checkRelations() }
    }

    @Test func deletesRemoveExactlyTheRowsTheOracleLetsTheCallerRemove() async throws {
        try await forEachWorld(relink: false) { try await $0.checkDeletes() }
    }

    /// Runs `checks` in every world on one database, the docs restored (and relinked, with
    /// `relink`) and the world's cells stored first. An error ends the test, naming its world.
    private func forEachWorld(relink: Bool, _ checks: @escaping @Sendable (WorldCheck) async throws -> Void)
        async throws
    {
        var random = SeededGenerator(seed: Self.seed)
        let worlds = (0..<Self.worldCount).map { _ in RandomWorld(&random) }
        try await EngineFixture.with { fixture in
            let docs = try await WorldDocs.seed(fixture)
            for (number, world) in worlds.enumerated() {
                let check = WorldCheck(docs: docs, world: world, number: number)
                do {
                    try await docs.restore()
                    if relink { try await docs.relink() }
                    _ = try await fixture.storePermissions(world.facts, ids: docs.ids)
                    try await checks(check)
                } catch {
                    Issue.record("\(check.context)\nstopped: \(String(reflecting: error))")
                    throw error
                }
            }
        }
    }
}

/// One random case: the permission cells on `Doc`, the caller, and the choices its paths make.
private struct RandomWorld: Sendable, CustomStringConvertible {
    /// The operations the cells name: each one some path asks about a row.
    static let operations: [DataOperation] = [
        .find, .update, .remove, .permission, .loadRelations, .addRelation, .deleteRelation,
    ]

    let facts: [PermissionFact]
    let user: String?
    let key: APIKeyKind
    let customRoles: [String]
    /// The parent docs of set, of a unit of work's ADD_RELATION and of its DELETE_RELATION, and
    /// the doc a deep save changes.
    let parents: [Int]
    /// Set's children, and the docs a bulk upsert names directly and in a unit of work.
    let subsets: [[Int]]
    /// `n >= threshold` of the bulk update, the unit of work's UPDATE_BULK, the bulk delete, the
    /// unit of work's DELETE_BULK and a service transaction's bulk update.
    let thresholds: [Int]

    init(_ random: inout SeededGenerator) {
        facts = (0..<Int.random(in: 0...18, using: &random)).map { _ in Self.fact(&random) }
        let userChoice = Int.random(in: 0...PermissionFact.users.count, using: &random)
        user = userChoice < PermissionFact.users.count ? PermissionFact.users[userChoice] : nil
        key = Bool.random(using: &random) ? .rest : .js
        let roles = PermissionFact.customRoles.filter { _ in Bool.random(using: &random) }
        customRoles = user == nil ? [] : roles
        parents = (0..<4).map { _ in Int.random(in: 0..<WorldDocs.count, using: &random) }
        subsets = (0..<3).map { _ in Self.subset(&random) }
        thresholds = (0..<5).map { _ in Int.random(in: 0..<WorldDocs.count, using: &random) }
    }

    /// One cell; global cells name roles only (a user becomes the every-role cell).
    static func fact(_ random: inout SeededGenerator) -> PermissionFact {
        let kind = pick(PermissionFact.Kind.allCases, &random)
        var principal = pick(PermissionFact.principals, &random)
        if kind == .global, case .user = principal { principal = .role(Principal.everyone) }
        let operation = pick(operations, &random)
        let decision: PermissionDecision = Bool.random(using: &random) ? .grant : .deny
        let object = Int.random(in: 0..<WorldDocs.count, using: &random)
        return PermissionFact(
            kind: kind, principal: principal, operation: operation, decision: decision, object: object)
    }

    /// One to three distinct docs.
    static func subset(_ random: inout SeededGenerator) -> [Int] {
        let shuffled = Array(0..<WorldDocs.count).shuffled(using: &random)
        return Array(shuffled.prefix(Int.random(in: 1...3, using: &random)))
    }

    static func pick<Element>(_ choices: [Element], _ random: inout SeededGenerator) -> Element {
        choices[Int.random(in: choices.indices, using: &random)]
    }

    /// The caller in the app `appID`.
    func caller(appID: String) -> Identity {
        let authentication = user == nil ? SystemRoles.notAuthenticated : SystemRoles.authenticated
        return Identity(appId: appID, keyKind: key, userId: user, roles: [authentication, key.role] + customRoles)
    }

    var description: String {
        let cells = facts.isEmpty ? "none" : facts.map(\.description).joined(separator: "; ")
        return
            "caller \(user ?? "anonymous") as \(([key.role] + customRoles).joined(separator: ", ")); cells: \(cells); "
            + "parents \(parents), subsets \(subsets), thresholds \(thresholds)"
    }
}

/// The eight `Doc` rows every world runs on: doc `i` has `n` = i, owner
/// ``PermissionCallers/owner(of:)``, and links to ``initialLinks(_:)`` through the 1:N relation
/// `links` onto `Doc`. Read and restored past every permission, as a system identity.
private struct WorldDocs: Sendable {
    static let count = PermissionFact.objectCount

    let fixture: EngineFixture
    let ids: [String]

    var engine: DataEngine { fixture.engine }

    /// Creates the docs (and with them the table and its columns `n` and `mark`) and their links.
    static func seed(_ fixture: EngineFixture) async throws -> WorldDocs {
        let docs = WorldDocs(fixture: fixture, ids: (0..<count).map { _ in UUID().uuidString })
        for index in docs.ids.indices { try await docs.recreate(index) }
        try await docs.relink()
        return docs
    }

    /// The docs doc `index` links to at the start of a world.
    static func initialLinks(_ index: Int) -> [Int] {
        [(index + 1) % count, (index + 3) % count]
    }

    /// Acts past every permission, as users-service's own engine does; `owner` owns what it creates.
    func system(owner: String? = nil) -> Identity {
        var identity = Identity(
            appId: fixture.appID, keyKind: .serverCode, userId: owner, roles: [APIKeyKind.serverCode.role])
        identity.isSystem = true
        return identity
    }

    /// Creates doc `index` under its id and owner (a deleted doc comes back as it was).
    func recreate(_ index: Int) async throws {
        let row = JSONObject([("objectId", .string(ids[index])), ("n", .integer(Int64(index))), ("mark", .integer(0))])
        _ = try await engine.create(
            "Doc", object: row, identity: system(owner: PermissionCallers.owner(of: index)), logger: fixture.logger)
    }

    /// Brings back the docs a world deleted, removes the rows it created and clears every mark.
    func restore() async throws {
        let rows = try await marks()
        for index in ids.indices where rows[ids[index]] == nil { try await recreate(index) }
        try await removeExtras()
        _ = try await engine.updateBulk(
            "Doc", condition: nil, changes: JSONObject([("mark", .integer(0))]), identity: system(),
            logger: fixture.logger)
    }

    /// Links every doc to its ``initialLinks(_:)`` only, declaring `links` the first time.
    func relink() async throws {
        let argument = try RelationColumnArgument("links:Doc:n")
        for index in ids.indices {
            let children = Self.initialLinks(index).map { ids[$0] }
            _ = try await engine.changeRelation(
                .set, table: "Doc", parentID: ids[index], argument: argument, children: .ids(children),
                identity: system(),
                logger: fixture.logger)
        }
    }

    /// Removes every row but the docs: the rows paths create carry `n` 100.
    func removeExtras() async throws {
        _ = try await engine.deleteBulk(
            "Doc", condition: QueryParser.condition("n >= 100"), identity: system(), logger: fixture.logger)
    }

    /// Every row's `mark`, by objectId.
    func marks() async throws -> [String: Int] {
        var query = FindQuery()
        query.pageSize = FindQuery.maximumPageSize
        var found: [String: Int] = [:]
        for text in try await engine.find("Doc", query: query, identity: system(), logger: fixture.logger) {
            let row = try fixture.decode(text)
            if let id = row["objectId"] as? String { found[id] = row["mark"] as? Int ?? 0 }
        }
        return found
    }

    /// The docs whose mark is `mark`.
    func marked(_ mark: Int) async throws -> Set<Int> {
        let rows = try await marks()
        return Set(ids.indices.filter { rows[ids[$0]] == mark })
    }

    /// The docs that exist.
    func present() async throws -> Set<Int> {
        let rows = try await marks()
        return Set(ids.indices.filter { rows[ids[$0]] != nil })
    }

    /// The ids of the rows that are not docs.
    func extras() async throws -> [String] {
        try await marks().keys.filter { !ids.contains($0) }.sorted()
    }

    /// The docs row `id` links to.
    func links(of id: String) async throws -> Set<Int> {
        var query = FindQuery()
        query.pageSize = FindQuery.maximumPageSize
        let rows = try await engine.loadRelation(
            table: "Doc", parentID: id, argument: RelationColumnArgument("links"), query: query, identity: system(),
            logger: fixture.logger)
        return try Set(indexes(rows))
    }

    /// Whether doc `index`'s ACL has a cell for the user `user`.
    func aclNames(user: String, on index: Int) async throws -> Bool {
        let cells = try await engine.objectPermissions(
            table: "Doc", objectID: ids[index], identity: system(), logger: fixture.logger)
        return (cells.array ?? []).contains { $0.object?["user"]?.string == user }
    }

    /// The doc each row of an answer is, in order.
    func indexes(_ rows: [String]) throws -> [Int] {
        try rows.map { try fixture.decode($0) }.map { docIndex(of: $0["objectId"]) }
    }

    /// The doc each object of a decoded array is, in order.
    func indexes(ofObjects value: Any?) -> [Int] {
        (value as? [[String: Any]] ?? []).map { docIndex(of: $0["objectId"]) }
    }

    /// The doc an objectId names; -1 for anything else.
    func docIndex(of objectID: Any?) -> Int {
        (objectID as? String).flatMap { ids.firstIndex(of: $0) } ?? -1
    }

    /// A row's JSON text decoded.
    func decoded(_ text: String?) throws -> [String: Any]? {
        try text.map { try fixture.decode($0) }
    }
}

/// One world's checks, as its caller: one per path, each against the oracle.
private struct WorldCheck: Sendable {
    let docs: WorldDocs
    let world: RandomWorld
    let number: Int
    let caller: Identity
    let scenario: PermissionScenario

    init(docs: WorldDocs, world: RandomWorld, number: Int) {
        self.docs = docs
        self.world = world
        self.number = number
        caller = world.caller(appID: docs.fixture.appID)
        scenario = PermissionScenario(world.facts)
    }

    /// What every failure says first: how to repeat it, and the world.
    var context: String {
        "WRITE_PATH_TEST_SEED=\(WritePathPermissionPropertyTests.seed), world \(number): \(world)"
    }

    var fixture: EngineFixture { docs.fixture }
    var engine: DataEngine { docs.fixture.engine }
    var ids: [String] { docs.ids }

    /// A mark no other path of any world writes.
    func uniqueMark(_ path: Int) -> Int {
        (number + 1) * 100 + path
    }

    // MARK: The oracle

    /// Whether the oracle lets the caller perform `operation` on doc `index`.
    func allows(_ operation: DataOperation, _ index: Int) -> Bool {
        let owner = PermissionCallers.owner(of: index)
        // An object's ACL changes only with Update on the object as well (AccessControl).
        if operation == .permission, !scenario.allows(caller, .update, object: index, owner: owner) { return false }
        return scenario.allows(caller, operation, object: index, owner: owner)
    }

    /// The docs (of `indexes`, else all) the oracle lets the caller perform `operation` on.
    func allowed(_ operation: DataOperation, among indexes: [Int]? = nil) -> Set<Int> {
        Set((indexes ?? Array(ids.indices)).filter { allows(operation, $0) })
    }

    /// Whether the oracle denies `operation` on every doc: only then may a request be refused
    /// whole (a decision the same for every row) instead of answering no rows.
    func deniedEverywhere(_ operation: DataOperation) -> Bool {
        allowed(operation).isEmpty
    }

    /// Whether the oracle lets the caller perform `operation` on a doc it has just created.
    func allowsOnItsNewDoc(_ operation: DataOperation) -> Bool {
        PermissionOracle.allows(
            PermissionCaller(caller), operation, container: "Doc", ownerID: caller.userId, acl: PermissionCells(),
            rules: scenario.rules)
    }

    // MARK: Expectations

    /// Expects a request answered or refused (1023) as the oracle says: refused when
    /// `mustRefuse`, answered unless `mayRefuse`.
    func expectOutcome(answered: Bool, mustRefuse: Bool, mayRefuse: Bool, _ path: String) {
        if answered {
            #expect(!mustRefuse, "\(context)\n\(path): answered, but the oracle denies it")
        } else {
            #expect(mayRefuse, "\(context)\n\(path): refused, but the oracle allows it")
        }
    }

    /// Expects a request about one doc answered exactly when the oracle allows it.
    func expectOutcome(answered: Bool, allowed: Bool, _ path: String) {
        expectOutcome(answered: answered, mustRefuse: !allowed, mayRefuse: !allowed, path)
    }

    /// Expects the docs of an answer (nil: refused) to be `expected`, each once.
    func expectRows(_ rows: [Int]?, _ expected: Set<Int>, mayRefuse: Bool, _ path: String) {
        expectOutcome(answered: rows != nil, mustRefuse: false, mayRefuse: mayRefuse, path)
        guard let rows else { return }
        #expect(
            rows.count == expected.count && Set(rows) == expected,
            "\(context)\n\(path): answered docs \(rows.sorted()), the oracle allows \(expected.sorted())")
    }

    /// Expects an answered row to be doc `index`, with `mark` when one is given.
    func expectRow(_ row: [String: Any]?, is index: Int, mark: Int? = nil, _ path: String) {
        guard let row else { return }
        let markMatches = mark.map { row["mark"] as? Int == $0 } ?? true
        #expect(
            row["objectId"] as? String == ids[index] && markMatches,
            "\(context)\n\(path) of doc \(index) answered \(row)")
    }

    /// Expects the docs marked `mark` to be exactly `expected`.
    func expectMarked(_ mark: Int, _ expected: Set<Int>, _ path: String) async throws {
        let marked = try await docs.marked(mark)
        #expect(
            marked == expected,
            "\(context)\n\(path): changed docs \(marked.sorted()), the oracle allows \(expected.sorted())")
    }

    /// Expects every doc but `removed` to exist.
    func expectPresent(allBut removed: Set<Int>, _ path: String) async throws {
        let present = try await docs.present()
        let expected = Set(ids.indices).subtracting(removed)
        #expect(
            present == expected, "\(context)\n\(path): docs left \(present.sorted()), expected \(expected.sorted())")
    }

    // MARK: Requests

    /// Every row on one page.
    var everyRow: FindQuery {
        var query = FindQuery()
        query.pageSize = FindQuery.maximumPageSize
        return query
    }

    /// The docs a find answers, in its order.
    func findDocs(_ query: FindQuery) async throws -> [Int] {
        let rows = try await engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
        return try docs.indexes(rows)
    }

    /// The docs loading doc `parent`'s links answers.
    func loadLinks(of parent: Int) async throws -> [Int] {
        let rows = try await engine.loadRelation(
            table: "Doc", parentID: ids[parent], argument: RelationColumnArgument("links"), query: everyRow,
            identity: caller,
            logger: fixture.logger)
        return try docs.indexes(rows)
    }

    /// Doc `index` with `mark` as its mark.
    func marking(_ index: Int, _ mark: Int) -> JSONObject {
        JSONObject([("objectId", .string(ids[index])), ("mark", .integer(Int64(mark)))])
    }

    /// Sets the mark and nothing else.
    func markChange(_ mark: Int) -> JSONObject {
        JSONObject([("mark", .integer(Int64(mark)))])
    }

    /// A new row `id` (not a doc: ``WorldDocs/removeExtras()`` removes it) with `mark`.
    func newRow(_ id: String, _ mark: Int) -> JSONObject {
        JSONObject([("objectId", .string(id)), ("n", .integer(100)), ("mark", .integer(Int64(mark)))])
    }

    /// The docs other than `index`.
    func others(_ index: Int) -> [Int] {
        ids.indices.filter { $0 != index }
    }

    /// The docs' ids as a JSON array.
    func jsonIDs(_ indexes: [Int]) -> String {
        "[" + indexes.map { "\"\(ids[$0])\"" }.joined(separator: ", ") + "]"
    }

    /// A unit of work of one operation on `Doc`, as the caller: whether it succeeded, and the
    /// operation's result. A failure other than a permission refusal (1023) is an issue.
    func unitOfWork(_ type: String, _ payload: String) async throws -> (answered: Bool, result: Any?) {
        let text =
            #"{"operations": [{"operationType": "\#(type)", "table": "Doc", "opResultId": "op", "payload": \#(payload)}]}"#
        let work = try UnitOfWork(body: JSONParser.parse(text))
        let envelope = try await engine.execute(work, identity: caller, logger: fixture.logger)
        let answer = try fixture.decode(envelope.jsonText)
        guard answer["success"] as? Bool == true else {
            let code = (answer["error"] as? [String: Any])?["code"] as? Int
            #expect(code == 1023, "\(context)\nunit of work \(type) \(payload) failed: \(envelope.jsonText)")
            return (false, nil)
        }
        return (true, ((answer["results"] as? [String: Any])?["op"] as? [String: Any])?["result"])
    }

    // MARK: Reads

    /// Find, count, find by id, a where clause through a relation, relations loaded with a find
    /// and on their own, a unit of work's FIND, real-time delivery, file fields' permits, and
    /// reading object ACLs.
    func checkReads() async throws {
        try await checkFind()
        try await checkCount()
        try await checkFindByID()
        try await checkWhereThroughARelation()
        try await checkFindLoadingRelations()
        try await checkLoadRelation()
        try await checkUnitOfWorkFind()
        try await checkRealTimeDelivery()
        try await checkObjectPermits()
        try await checkObjectACLReads()
    }

    func checkFind() async throws {
        let rows = try await EngineFixture.unlessDenied { try await findDocs(everyRow) }
        expectRows(rows, allowed(.find), mayRefuse: deniedEverywhere(.find), "find")
    }

    func checkCount() async throws {
        let count = try await EngineFixture.unlessDenied {
            try await engine.count("Doc", query: FindQuery(), identity: caller, logger: fixture.logger)
        }
        let expected = allowed(.find)
        expectOutcome(answered: count != nil, mustRefuse: false, mayRefuse: expected.isEmpty, "count")
        #expect(
            count == nil || count == expected.count,
            "\(context)\ncount: \(count ?? -1), the oracle allows \(expected.sorted())")
    }

    func checkFindByID() async throws {
        for index in ids.indices {
            let text = try await EngineFixture.unlessDenied {
                try await engine.object(
                    "Doc", id: ids[index], query: FindQuery(), identity: caller, logger: fixture.logger)
            }
            expectOutcome(answered: text != nil, allowed: allows(.find, index), "find by id of doc \(index)")
            let row = try docs.decoded(text)
            expectRow(row, is: index, "find by id")
        }
    }

    /// `links.n = k` matches the docs linking to doc `k` that the caller may find and load the
    /// links of, where it may find doc `k`.
    func checkWhereThroughARelation() async throws {
        let findable = allowed(.find)
        for child in ids.indices {
            var query = everyRow
            query.condition = try QueryParser.condition("links.n = \(child)")
            let rows = try await EngineFixture.unlessDenied { try await findDocs(query) }
            let expected = findable.filter { parent in
                findable.contains(child) && allows(.loadRelations, parent)
                    && WorldDocs.initialLinks(parent).contains(child)
            }
            expectRows(rows, expected, mayRefuse: findable.isEmpty, "find where links.n = \(child)")
        }
    }

    /// A find loading `links`: each doc found carries the linked docs the caller may find, and
    /// none where it may not load the doc's links.
    func checkFindLoadingRelations() async throws {
        var query = everyRow
        query.relationPaths = [["links"]]
        query.relationsPageSize = FindQuery.maximumPageSize
        let texts = try await EngineFixture.unlessDenied {
            try await engine.find("Doc", query: query, identity: caller, logger: fixture.logger)
        }
        let findable = allowed(.find)
        let rows = try texts.map { try docs.indexes($0) }
        expectRows(rows, findable, mayRefuse: findable.isEmpty, "find loading links")
        for text in texts ?? [] {
            let row = try fixture.decode(text)
            let parent = docs.docIndex(of: row["objectId"])
            guard parent >= 0 else { continue }
            let linked = docs.indexes(ofObjects: row["links"])
            let expected: Set<Int> =
                allows(.loadRelations, parent) ? findable.intersection(WorldDocs.initialLinks(parent)) : []
            #expect(
                linked.count == expected.count && Set(linked) == expected,
                "\(context)\nfind loading links: doc \(parent) carries docs \(linked.sorted()), the oracle allows \(expected.sorted())"
            )
        }
    }

    /// Loading a doc's links: refused where the caller may not load them, else the linked docs it
    /// may find.
    func checkLoadRelation() async throws {
        let findable = allowed(.find)
        for parent in ids.indices {
            let rows = try await EngineFixture.unlessDenied { try await loadLinks(of: parent) }
            let permitted = allows(.loadRelations, parent)
            let path = "load the links of doc \(parent)"
            expectOutcome(
                answered: rows != nil, mustRefuse: !permitted, mayRefuse: !permitted || findable.isEmpty, path)
            if permitted, let rows {
                expectRows(rows, findable.intersection(WorldDocs.initialLinks(parent)), mayRefuse: false, path)
            }
        }
    }

    func checkUnitOfWorkFind() async throws {
        let answer = try await unitOfWork("FIND", #"{"pageSize": 100}"#)
        let rows: [Int]? = answer.answered ? docs.indexes(ofObjects: answer.result) : nil
        expectRows(rows, allowed(.find), mayRefuse: deniedEverywhere(.find), "unit of work FIND")
    }

    /// Real-time change events reach a subscriber for exactly the docs it may find, and a
    /// subscription is refused only where it may find none: decided as messaging-service decides
    /// (its subscribe asks ``DataEngine/readAccess(_:table:)``; its delivery reads the Find ACL
    /// cells only when the catalog says the table has some, and asks ``ObjectReadAccess``).
    func checkRealTimeDelivery() async throws {
        let subscribing = try await engine.readAccess(caller, table: "Doc")
        let catalog = try await engine.cache.catalog(for: fixture.appID)
        var acls = ObjectACLs.none
        if ObjectReadAccess.tableHasACLs("Doc", catalog: catalog) {
            acls = try await engine.findACLs(app: fixture.appID, table: "Doc", ids: ids)
        }
        let access = ObjectReadAccess(caller, table: "Doc", catalog: catalog)
        let findable = allowed(.find)
        let delivered = Set(
            ids.indices.filter {
                access.allows(objectId: ids[$0], ownerId: PermissionCallers.owner(of: $0), acls: acls)
            })
        #expect(
            subscribing.constant != false || findable.isEmpty,
            "\(context)\nreal-time: subscribing is refused, but the oracle allows docs \(findable.sorted())")
        #expect(
            delivered == findable,
            "\(context)\nreal-time: events reach the caller for docs \(delivered.sorted()), the oracle allows \(findable.sorted())"
        )
    }

    /// File fields follow a row's rights through ``DataEngine/permits(_:objectIDs:table:identity:logger:)``.
    func checkObjectPermits() async throws {
        for operation in RandomWorld.operations {
            let permits = try await engine.permits(
                operation, objectIDs: Set(ids + ["no-such-doc"]), table: "Doc", identity: caller, logger: fixture.logger
            )
            let permitted = Set(permits.permitted.map { docs.docIndex(of: $0) })
            let expected = allowed(operation)
            #expect(
                permits.existing == Set(ids),
                "\(context)\npermits for \(operation.rawValue): existing \(permits.existing)")
            #expect(
                permitted == expected,
                "\(context)\npermits for \(operation.rawValue): docs \(permitted.sorted()), the oracle allows \(expected.sorted())"
            )
        }
    }

    func checkObjectACLReads() async throws {
        for index in ids.indices {
            let cells = try await EngineFixture.unlessDenied {
                try await engine.objectPermissions(
                    table: "Doc", objectID: ids[index], identity: caller, logger: fixture.logger)
            }
            expectOutcome(
                answered: cells != nil, allowed: allows(.permission, index), "read the object ACL of doc \(index)")
        }
    }

    // MARK: Writes

    /// Save, update, upsert, a unit of work's UPDATE and UPSERT and a service transaction's update
    /// of every doc; bulk updates and bulk upserts directly, in units of work and in a service
    /// transaction; setting a cell of every doc's ACL.
    func checkWrites() async throws {
        try await checkEachDoc("save", mark: uniqueMark(1)) { index, mark in
            let text = try await EngineFixture.unlessDenied {
                try await engine.save("Doc", object: marking(index, mark), identity: caller, logger: fixture.logger)
            }
            return try docs.decoded(text)
        }
        try await checkEachDoc("update", mark: uniqueMark(2)) { index, mark in
            let text = try await EngineFixture.unlessDenied {
                try await engine.update(
                    "Doc", id: ids[index], changes: markChange(mark), identity: caller, logger: fixture.logger)
            }
            return try docs.decoded(text)
        }
        try await checkEachDoc("upsert", mark: uniqueMark(3)) { index, mark in
            let text = try await EngineFixture.unlessDenied {
                try await engine.upsert("Doc", object: marking(index, mark), identity: caller, logger: fixture.logger)
            }
            return try docs.decoded(text)
        }
        for (offset, type) in ["UPDATE", "UPSERT"].enumerated() {
            try await checkEachDoc("unit of work \(type)", mark: uniqueMark(4 + offset)) { index, mark in
                let answer = try await unitOfWork(type, #"{"objectId": "\#(ids[index])", "mark": \#(mark)}"#)
                return answer.answered ? (answer.result as? [String: Any] ?? [:]) : nil
            }
        }
        try await checkEachDoc("a service transaction's update", mark: uniqueMark(6)) { index, mark in
            let text = try await EngineFixture.unlessDenied {
                try await engine.transaction(identity: caller, logger: fixture.logger) { transaction in
                    try await transaction.update("Doc", id: ids[index], changes: markChange(mark))
                }
            }
            return try docs.decoded(text)
        }
        try await checkBulkUpdates()
        try await checkBulkUpsert(mark: uniqueMark(10))
        try await checkUnitOfWorkBulkUpsert(mark: uniqueMark(11))
        try await checkObjectACLChanges()
    }

    /// Sends `write` (set doc `index`'s mark to `mark`) for every doc: each is answered with the
    /// changed row exactly when the oracle lets the caller update the doc, and only those change.
    func checkEachDoc(
        _ path: String, mark: Int, _ write: (_ index: Int, _ mark: Int) async throws -> [String: Any]?
    ) async throws {
        for index in ids.indices {
            let row = try await write(index, mark)
            expectOutcome(answered: row != nil, allowed: allows(.update, index), "\(path) of doc \(index)")
            expectRow(row, is: index, mark: mark, path)
        }
        try await expectMarked(mark, allowed(.update), path)
    }

    /// A bulk update by where clause, a unit of work's UPDATE_BULK by ids and a service
    /// transaction's update of every row matching a where clause.
    func checkBulkUpdates() async throws {
        let threshold = world.thresholds[0]
        let mark = uniqueMark(7)
        let count = try await EngineFixture.unlessDenied {
            try await engine.updateBulk(
                "Doc", condition: QueryParser.condition("n >= \(threshold)"), changes: markChange(mark),
                identity: caller,
                logger: fixture.logger)
        }
        try await expectBulkUpdate(
            count, of: Array(threshold..<WorldDocs.count), mark: mark, "bulk update where n >= \(threshold)")

        let named = Array(world.thresholds[1]..<WorldDocs.count)
        let workMark = uniqueMark(8)
        let payload = #"{"unconditional": \#(jsonIDs(named)), "changes": {"mark": \#(workMark)}}"#
        let answer = try await unitOfWork("UPDATE_BULK", payload)
        let workCount: Int? = answer.answered ? (answer.result as? Int ?? -1) : nil
        try await expectBulkUpdate(workCount, of: named, mark: workMark, "unit of work UPDATE_BULK of docs \(named)")

        let serviceThreshold = world.thresholds[4]
        let serviceMark = uniqueMark(9)
        let serviceCount = try await EngineFixture.unlessDenied {
            try await engine.transaction(identity: caller, logger: fixture.logger) { transaction in
                try await transaction.updateAll(
                    "Doc", matching: QueryParser.condition("n >= \(serviceThreshold)"), changes: markChange(serviceMark)
                )
            }
        }
        try await expectBulkUpdate(
            serviceCount, of: Array(serviceThreshold..<WorldDocs.count), mark: serviceMark,
            "a service transaction's update where n >= \(serviceThreshold)")
    }

    /// A bulk update of the docs `named` changes (and counts) those the oracle lets the caller
    /// update; it is refused only where the caller may update no doc.
    func expectBulkUpdate(_ count: Int?, of named: [Int], mark: Int, _ path: String) async throws {
        let expected = allowed(.update, among: named)
        expectOutcome(answered: count != nil, mustRefuse: false, mayRefuse: deniedEverywhere(.update), path)
        #expect(
            count == nil || count == expected.count,
            "\(context)\n\(path): counted \(count ?? -1), the oracle allows \(expected.sorted())")
        try await expectMarked(mark, count == nil ? [] : expected, path)
    }

    func checkBulkUpsert(mark: Int) async throws {
        let named = world.subsets[1]
        let fresh = "fresh-\(mark)"
        let objects = named.map { marking($0, mark) } + [newRow(fresh, mark)]
        let answer = try await EngineFixture.unlessDenied {
            try await engine.upsertBulk("Doc", objects: objects, identity: caller, logger: fixture.logger)
        }
        try await expectBulkUpsert(
            answer, named: named, fresh: fresh, mark: mark, "bulk upsert of docs \(named) and a new row")
    }

    func checkUnitOfWorkBulkUpsert(mark: Int) async throws {
        let named = world.subsets[2]
        let fresh = "fresh-\(mark)"
        let items =
            named.map { #"{"objectId": "\#(ids[$0])", "mark": \#(mark)}"# }
            + [#"{"objectId": "\#(fresh)", "n": 100, "mark": \#(mark)}"#]
        let answer = try await unitOfWork("UPSERT_BULK", "[" + items.joined(separator: ", ") + "]")
        let written: [String]? = answer.answered ? (answer.result as? [String] ?? []) : nil
        try await expectBulkUpsert(
            written, named: named, fresh: fresh, mark: mark, "unit of work UPSERT_BULK of docs \(named) and a new row")
    }

    /// A bulk upsert of the docs `named` and the new row `fresh` is all or nothing: written whole
    /// when the oracle lets the caller update every named doc, else refused with nothing written.
    func expectBulkUpsert(_ answer: [String]?, named: [Int], fresh: String, mark: Int, _ path: String) async throws {
        let permitted = named.allSatisfy { allows(.update, $0) }
        expectOutcome(answered: answer != nil, allowed: permitted, path)
        let expectedIDs = named.map { ids[$0] } + [fresh]
        #expect(answer == nil || answer == expectedIDs, "\(context)\n\(path): answered \(answer ?? [])")
        try await expectMarked(mark, answer == nil ? [] : Set(named), path)
        let extras = try await docs.extras()
        let expectedExtras: [String] = answer == nil ? [] : [fresh]
        #expect(extras == expectedExtras, "\(context)\n\(path): rows created \(extras)")
        try await docs.removeExtras()
    }

    /// Setting a cell of a doc's ACL needs the Permission right on the doc (the cell is for
    /// Describe, which no row decision here asks about).
    func checkObjectACLChanges() async throws {
        let probe = PermissionChange(decision: .grant, operation: .describe, principal: .user("probe"))
        for index in ids.indices {
            let done: Void? = try await EngineFixture.unlessDenied {
                try await engine.setObjectPermission(
                    probe, table: "Doc", objectID: ids[index], identity: caller, logger: fixture.logger)
            }
            let path = "set a cell of the object ACL of doc \(index)"
            expectOutcome(answered: done != nil, allowed: allows(.permission, index), path)
            let written = try await docs.aclNames(user: "probe", on: index)
            #expect(written == (done != nil), "\(context)\n\(path): the cell is \(written ? "" : "not ")there")
        }
    }

    // MARK: Relations

    /// Add to and delete from every doc's links, set one doc's, a unit of work's ADD_RELATION and
    /// DELETE_RELATION, and a deep save that changes an existing doc.
    func checkRelations() async throws {
        let parents = world.parents
        for parent in ids.indices {
            try await checkRelationChange(.add, parent: parent, children: others(parent))
        }
        try await checkUnitOfWorkRelationChange(.delete, parent: parents[2])
        for parent in ids.indices {
            try await checkRelationChange(.delete, parent: parent, children: others(parent))
        }
        try await checkRelationChange(.set, parent: parents[0], children: world.subsets[0].filter { $0 != parents[0] })
        try await checkUnitOfWorkRelationChange(.add, parent: parents[1])
        try await checkDeepSave(child: parents[3], mark: uniqueMark(12))
    }

    func checkRelationChange(_ change: RelationChange, parent: Int, children: [Int]) async throws {
        let path = "\(change.rawValue) links of doc \(parent) to docs \(children)"
        try await expectRelationChange(change, parent: parent, children: children, path) {
            try await EngineFixture.unlessDenied {
                try await engine.changeRelation(
                    change, table: "Doc", parentID: ids[parent], argument: RelationColumnArgument("links"),
                    children: .ids(children.map { ids[$0] }), identity: caller, logger: fixture.logger)
            }
        }
    }

    func checkUnitOfWorkRelationChange(_ change: RelationChange, parent: Int) async throws {
        let type = change == .add ? "ADD_RELATION" : "DELETE_RELATION"
        let children = others(parent)
        let payload =
            #"{"parentObject": "\#(ids[parent])", "relationColumn": "links", "unconditional": \#(jsonIDs(children))}"#
        try await expectRelationChange(
            change, parent: parent, children: children, "unit of work \(type) on doc \(parent)"
        ) {
            let answer = try await unitOfWork(type, payload)
            return answer.answered ? (answer.result as? Int ?? -1) : nil
        }
    }

    /// A relation change on doc `parent` naming `children`: refused unless the oracle lets the
    /// caller perform the change's operations on the parent (AddRelation, DeleteRelation, both for
    /// set), else it links or unlinks exactly the named children the caller may find, and counts
    /// the links it made (add, set) or removed (delete).
    func expectRelationChange(
        _ change: RelationChange, parent: Int, children: [Int], _ path: String, _ send: () async throws -> Int?
    ) async throws {
        let before = try await docs.links(of: ids[parent])
        let count = try await send()
        let after = try await docs.links(of: ids[parent])
        let needs: [DataOperation] =
            switch change {
            case .add: [.addRelation]
            case .set: [.addRelation, .deleteRelation]
            case .delete: [.deleteRelation]
            }
        let permitted = needs.allSatisfy { allows($0, parent) }
        let selected = allowed(.find, among: children)
        let expected: (links: Set<Int>, count: Int) =
            switch change {
            case .add: (before.union(selected), selected.subtracting(before).count)
            case .set: (selected, selected.subtracting(before).count)
            case .delete: (before.subtracting(selected), selected.intersection(before).count)
            }
        expectOutcome(
            answered: count != nil, mustRefuse: !permitted, mayRefuse: !permitted || deniedEverywhere(.find), path)
        let report =
            "links \(before.sorted()) became \(after.sorted()), counted \(count.map { String($0) } ?? "nothing"); "
            + "the oracle allows \(expected.links.sorted()), counted \(expected.count)"
        if count != nil {
            #expect(count == expected.count && after == expected.links, "\(context)\n\(path): \(report)")
        } else {
            #expect(after == before, "\(context)\n\(path): refused, yet \(report)")
        }
    }

    /// A deep save of a new doc linking doc `child` with a change to it: the child's Update and
    /// the new doc's AddRelation and DeleteRelation decide the whole save; the child is linked only
    /// where the caller may find it.
    func checkDeepSave(child: Int, mark: Int) async throws {
        let tree = JSONObject([("n", .integer(100)), ("links", .array([.object(marking(child, mark))]))])
        let answer = try await EngineFixture.unlessDenied {
            try await engine.deepSave("Doc", object: tree, identity: caller, logger: fixture.logger)
        }
        let permitted = allows(.update, child) && allowsOnItsNewDoc(.addRelation) && allowsOnItsNewDoc(.deleteRelation)
        let path = "deep save of a new doc linking doc \(child) with a change"
        expectOutcome(
            answered: answer != nil, mustRefuse: !permitted, mayRefuse: !permitted || deniedEverywhere(.find), path)
        try await expectMarked(mark, answer == nil ? [] : [child], path)
        let extras = try await docs.extras()
        #expect(extras.count == (answer == nil ? 0 : 1), "\(context)\n\(path): rows created \(extras)")
        if answer != nil, let parent = extras.first {
            let links = try await docs.links(of: parent)
            let expected: Set<Int> = allows(.find, child) ? [child] : []
            #expect(
                links == expected,
                "\(context)\n\(path): the new doc links docs \(links.sorted()), expected \(expected.sorted())")
        }
        try await docs.removeExtras()
    }

    // MARK: Deletes

    /// Delete by id and a unit of work's DELETE, a bulk delete and a unit of work's DELETE_BULK,
    /// each from all eight docs.
    func checkDeletes() async throws {
        try await checkDeletesByID()
        try await restore()
        let threshold = world.thresholds[2]
        try await expectBulkDelete(of: Array(threshold..<WorldDocs.count), "bulk delete where n >= \(threshold)") {
            try await EngineFixture.unlessDenied {
                try await engine.deleteBulk(
                    "Doc", condition: QueryParser.condition("n >= \(threshold)"), identity: caller,
                    logger: fixture.logger)
            }
        }
        try await restore()
        let workThreshold = world.thresholds[3]
        let payload = #"{"conditional": "n >= \#(workThreshold)"}"#
        let workPath = "unit of work DELETE_BULK where n >= \(workThreshold)"
        try await expectBulkDelete(of: Array(workThreshold..<WorldDocs.count), workPath) {
            let answer = try await unitOfWork("DELETE_BULK", payload)
            return answer.answered ? (answer.result as? Int ?? -1) : nil
        }
    }

    /// Brings back the docs a path deleted, and the world's cells.
    func restore() async throws {
        try await docs.restore()
        _ = try await fixture.storePermissions(world.facts, ids: ids)
    }

    /// Deletes every doc by id, the even ones directly and the odd ones in units of work: each is
    /// answered exactly when the oracle lets the caller remove it, and only those go.
    func checkDeletesByID() async throws {
        for index in ids.indices {
            let direct = index.isMultiple(of: 2)
            let answered: Bool
            if direct {
                answered =
                    try await EngineFixture.unlessDenied {
                        try await engine.delete("Doc", id: ids[index], identity: caller, logger: fixture.logger)
                    } != nil
            } else {
                answered = try await unitOfWork("DELETE", "\"\(ids[index])\"").answered
            }
            let path = direct ? "delete by id" : "unit of work DELETE"
            expectOutcome(answered: answered, allowed: allows(.remove, index), "\(path) of doc \(index)")
        }
        try await expectPresent(allBut: allowed(.remove), "delete by id and unit of work DELETE")
    }

    /// A bulk delete of the docs `named` removes (and counts) those the oracle lets the caller
    /// remove; it is refused only where the caller may remove no doc.
    func expectBulkDelete(of named: [Int], _ path: String, _ send: () async throws -> Int?) async throws {
        let count = try await send()
        let expected = allowed(.remove, among: named)
        expectOutcome(answered: count != nil, mustRefuse: false, mayRefuse: deniedEverywhere(.remove), path)
        #expect(
            count == nil || count == expected.count,
            "\(context)\n\(path): counted \(count ?? -1), the oracle allows \(expected.sorted())")
        try await expectPresent(allBut: count == nil ? [] : expected, path)
    }
}
