import PostgresSupport
import TestSupport
import Testing

/// The announced per-app cache (geo's category cells, messaging's channel cells) keeps an app's value only while a listener is subscribed, forgets
/// them when a change is announced, never keeps a load that a change overtook, and holds at
/// most its capacity of apps.
@Suite(.tags(.fast)) struct AnnouncedAppCacheTests {
    /// Counts loads and answers a version (`v<n>`) for each.
    actor Loader {
        var loads: [String: Int] = [:]
        var gate: CheckedContinuation<Void, Never>?
        var holding = false

        func load(_ app: String) async -> String {
            loads[app, default: 0] += 1
            if holding { await withCheckedContinuation { gate = $0 } }
            return "v\(loads[app] ?? 0)"
        }

        func hold() { holding = true }
        func release() {
            holding = false
            gate?.resume()
            gate = nil
        }
        func waitingLoad() -> Bool { gate != nil }
        func count(_ app: String) -> Int { loads[app] ?? 0 }
    }

    @Test func keepsWhileListeningAndForgetsOnAnnouncements() async throws {
        let loader = Loader()
        let cache = AnnouncedAppCache(channel: "test_cache") { await loader.load($0) }
        _ = try await cache.value(app: "a")
        _ = try await cache.value(app: "a")
        #expect(await loader.count("a") == 2, "without a listener nothing is kept")
        await cache.setListening(true)
        _ = try await cache.value(app: "a")
        _ = try await cache.value(app: "a")
        #expect(await loader.count("a") == 3)
        await cache.receive("a")
        let fresh = try await cache.value(app: "a")
        #expect(await loader.count("a") == 4 && fresh == "v4")
        await cache.setListening(false)
        _ = try await cache.value(app: "a")
        #expect(await loader.count("a") == 5)
    }

    @Test func aLoadOvertakenByAChangeIsNotKept() async throws {
        let loader = Loader()
        let cache = AnnouncedAppCache(channel: "test_cache") { await loader.load($0) }
        await cache.setListening(true)
        await loader.hold()
        let slow = Task { try await cache.value(app: "a") }
        while await !loader.waitingLoad() { await Task.yield() }
        await cache.invalidate("a")
        await loader.release()
        _ = try await slow.value
        _ = try await cache.value(app: "a")
        #expect(await loader.count("a") == 2, "the overtaken load was served, not kept")
        _ = try await cache.value(app: "a")
        #expect(await loader.count("a") == 2)
    }

    @Test func holdsAtMostItsCapacity() async throws {
        let loader = Loader()
        let cache = AnnouncedAppCache(channel: "test_cache") { await loader.load($0) }
        await cache.setListening(true)
        for index in 0...cache.capacity { _ = try await cache.value(app: "app\(index)") }
        _ = try await cache.value(app: "app\(cache.capacity)")
        _ = try await cache.value(app: "app0")
        #expect(await loader.count("app\(cache.capacity)") == 1)
        #expect(await loader.count("app0") == 2, "the oldest entry made room")
    }
}
