import DataEngine
import Foundation
import InternalProtocol
import Logging
import Synchronization
import Testing

@testable import MessagingService

/// A table whose events cannot be delivered because their rights cannot be read lags instead of
/// losing them: once the rights can be read its subscribers receive every one, in commit order
/// and once; other tables' events go on meanwhile; and a subscription that leaves while its table
/// lags stands before what it did not receive. No database: the log is a list, the rights a
/// stand-in that fails a given number of times.
@Suite(.tags(.fast)) struct DataFeedLagTests {
    static let app = "app"

    /// The change log as a list; every entry is announced as it is appended.
    actor ListLog: ChangeSource {
        private var records: [ChangeRecord] = []

        /// Logs the creation of object `number` of `table`, at position `number`.
        func append(_ table: String, _ number: Int) {
            let event = #"{"event": "created", "object": {"___class": "\#(table)", "objectId": "\#(number)"}}"#
            records.append(
                ChangeRecord(
                    position: ChangePosition(commit: UInt64(number), index: 0), app: DataFeedLagTests.app,
                    table: table, content: event))
        }

        func watch(_ tables: [(app: String, table: String)], for duration: Duration) {}

        func read(after position: ChangePosition, limit: Int) -> [ChangeRecord] {
            Array(records.filter { $0.position > position }.prefix(limit))
        }

        func replay(app: String, table: String, after position: ChangePosition, through: ChangePosition, limit: Int)
            -> [ChangeRecord]
        {
            let ofTable = records.filter { $0.app == app && $0.table == table }
            return Array(ofTable.filter { $0.position > position && $0.position <= through }.prefix(limit))
        }

        func latest() -> ChangePosition { records.last?.position ?? ChangePosition(commit: 0, index: 0) }

        func now() -> ChangePosition { latest() }
    }

    /// Rights that cannot be read for `table` the first `failuresLeft` times they are asked for.
    actor FlakyRights {
        struct Unreadable: Error {}

        let table: String
        private(set) var failuresLeft: Int

        init(failing table: String, times: Int) {
            self.table = table
            failuresLeft = times
        }

        func read(_ key: DataFeed.Key) throws -> DataFeed.Rights {
            if key.table == table, failuresLeft > 0 {
                failuresLeft -= 1
                throw Unreadable()
            }
            return DataFeed.Rights(catalog: AppCatalog(appID: key.app), acls: .none)
        }
    }

    /// What one subscription received: the id of the object created.
    struct Delivery: Equatable, CustomStringConvertible {
        let subscription: String
        let objectId: String

        var description: String { "\(subscription):\(objectId)" }
    }

    /// A connection's transport, keeping what is sent.
    final class Transport: RTWriter {
        private let frames = Mutex<[String]>([])

        func send(_ text: String) async -> Bool {
            frames.withLock { $0.append(text) }
            return true
        }

        func close(code: UInt16, reason: String) async {}

        /// The changes delivered, in the order they were sent.
        var deliveries: [Delivery] {
            frames.withLock { $0 }.compactMap { text -> Delivery? in
                guard case .message(let data)? = EnginePacket(text), let event = SocketIOPacket(data)?.data?.array,
                    event.first?.string == "SUB_RES", let body = event.last?.object,
                    let subscription = body["id"]?.string, let objectId = body["data"]?.object?["objectId"]?.string
                else { return nil }
                return Delivery(subscription: subscription, objectId: objectId)
            }
        }
    }

    /// A subscription to what is created in its table, by a caller who may read every object:
    /// what is tested is what arrives when, not who may read it.
    func subscription(_ id: String, _ outbox: RTOutbox) -> DataFeed.Subscription {
        var identity = Identity.anonymous(appId: Self.app, keyKind: .rest)
        identity.isSystem = true
        return DataFeed.Subscription(
            id: id, kind: .created, predicate: nil, whereClause: nil, identity: identity, outbox: outbox,
            namespace: "/", fileLinks: SubscriberFileLinks(publicURL: "http://files", appId: Self.app, apiKey: nil))
    }

    @Test func eventsWhoseRightsWereNotReadArriveOnceInOrderWhenTheyAre() async throws {
        let log = ListLog()
        // T's rights fail in the first round and in the replay after it.
        let rights = FlakyRights(failing: "T", times: 2)
        var logger = Logger(label: "data-feed-lag-test")
        // Its warnings that rights were not read are expected here.
        logger.logLevel = .error
        let feed = DataFeed(
            log: log, readRights: { key, _ in try await rights.read(key) }, watchDuration: .seconds(60),
            logger: logger)
        let transport = Transport()
        let outbox = RTOutbox(limit: 100, writer: transport)
        let (connection, leaving) = (UUID(), UUID())
        func table(_ name: String) -> DataFeed.Key { DataFeed.Key(app: Self.app, table: name) }
        try await feed.add(subscription("T", outbox), connection: connection, on: table("T"), resumingAfter: nil)
        try await feed.add(subscription("U", outbox), connection: connection, on: table("U"), resumingAfter: nil)
        try await feed.add(
            subscription("L", RTOutbox(limit: 100, writer: Transport())), connection: leaving, on: table("T"),
            resumingAfter: nil)

        for (name, number) in [("T", 1), ("T", 2), ("T", 3), ("U", 4)] { await log.append(name, number) }
        await feed.catchUp()
        #expect(await rights.failuresLeft == 0)
        #expect(
            await feed.removeAll(connection: leaving).map(\.position) == [ChangePosition(commit: 0, index: 0)],
            "a subscription leaving while its table lags stands before what it was not sent")

        for (name, number) in [("T", 5), ("U", 6), ("T", 7)] { await log.append(name, number) }
        await feed.catchUp()
        await log.append("T", 8)
        await feed.catchUp()

        outbox.finish(.normal)
        await outbox.closed()
        let deliveries = transport.deliveries
        #expect(deliveries.first == Delivery(subscription: "U", objectId: "4"), "U's events did not wait for T's")
        #expect(deliveries.filter { $0.subscription == "T" }.map(\.objectId) == ["1", "2", "3", "5", "7", "8"])
        #expect(deliveries.filter { $0.subscription == "U" }.map(\.objectId) == ["4", "6"])
    }
}
