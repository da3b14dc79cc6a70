/// The first element of `stream` satisfying `predicate`, or nil when the stream ends or `deadline` passes first (a
/// generous bound that only ends a failing test; the wait itself is on the stream, an event).
public func first<Element: Sendable>(
    _ stream: some AsyncSequence<Element, Never> & Sendable, within deadline: Duration = testDeadline,
    where predicate: @escaping @Sendable (Element) -> Bool
) async -> Element? {
    await withTaskGroup(of: Element?.self) { group in
        group.addTask {
            for await element in stream where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: deadline)
            return nil
        }
        let result = await group.next() ?? nil
        group.cancelAll()
        return result
    }
}
