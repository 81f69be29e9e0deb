import Testing

@testable import MessagingService

/// The catch-up loop both real-time feeds run, against a store that grows while it is read:
/// entries appended and announced during the catch-up are caught up too, each reaches the
/// reader once and in order, a full batch continues after its last entry, and nothing past the
/// feed's position at a read is delivered.
@Suite(.tags(.fast)) struct CatchUpTests {
    /// Entries numbered by their positions; the feed stands at `announced`, and the store may
    /// hold entries past it (written, not yet announced).
    struct Store {
        var entries = Array(1...8)
        var announced = 6

        /// Up to `limit` entries after `from` and at or before `through`.
        func read(after from: Int, through: Int, limit: Int) -> [Int] {
            Array(entries.filter { $0 > from && $0 <= through }.prefix(limit))
        }

        /// Three more entries are written and three more announced, up to 20.
        mutating func moveOn() {
            entries += (entries.count + 1...entries.count + 3).filter { $0 <= 22 }
            announced = min(announced + 3, 20)
        }
    }

    @Test(arguments: [1, 2, 3, 5, 1_000])
    func whatIsAnnouncedWhileCatchingUpIsCaughtUpOnceInOrder(batch: Int) async throws {
        var store = Store()
        var delivered: [Int] = []
        let reached = try await CatchUp<Int>(batch: batch).run(
            from: 2, through: { store.announced },
            read: { from, through in
                let entries = store.read(after: from, through: through, limit: batch)
                // The feed moves on while its actor waits for the read.
                store.moveOn()
                return entries
            },
            position: { $0 },
            deliver: { entries, after in
                #expect(entries.count <= batch)
                #expect(entries.allSatisfy { $0 > after }, "only what was read after \(after)")
                delivered += entries
            })
        #expect(delivered == Array(3...20), "every announced entry after the start, once, in order; none past 20")
        #expect(reached == 20)
    }

    @Test func aReaderAtOrPastTheFeedReadsNothing() async throws {
        for (start, feed) in [(5, 5), (7, 5), (5, nil)] as [(Int, Int?)] {
            var reads = 0
            let reached = try await CatchUp<Int>(batch: 10).run(
                from: start, through: { feed },
                read: { _, _ in
                    reads += 1
                    return [Int]()
                },
                position: { $0 },
                deliver: { _, _ in })
            #expect(reads == 0 && reached == start, "from \(start) with the feed at \(String(describing: feed))")
        }
    }

    @Test func aFailedDeliveryEndsTheCatchUp() async throws {
        struct Refused: Error {}
        var reads = 0
        do {
            _ = try await CatchUp<Int>(batch: 2).run(
                from: 0, through: { 10 },
                read: { from, _ in
                    reads += 1
                    return [from + 1, from + 2]
                },
                position: { $0 },
                deliver: { _, _ in throw Refused() })
            Issue.record("the catch-up went on past a failed delivery")
        } catch {
            #expect(error is Refused)
        }
        #expect(reads == 1)
    }
}
