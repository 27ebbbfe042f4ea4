import AQGraph

/// The graphs the graph tests share.
enum TestGraphs {
    /// One input into a node "lim" (ports "in", "out") of `latency` frames, and straight to the
    /// output beside it: the two summed.
    static func dryBesideDelay(latency: Int = 240) throws -> PluginGraph {
        var graph = PluginGraph(inputs: 1, outputs: 1)
        try graph.add(GraphNode(id: "lim", inputs: ["in"], outputs: ["out"], latency: latency))
        try graph.connect(.graphInput(0), to: .plugin(node: "lim", port: "in"))
        try graph.connect(.plugin(node: "lim", port: "out"), to: .graphOutput(0))
        try graph.connect(.graphInput(0), to: .graphOutput(0))
        return graph
    }

    /// One input through "slow" (100 frames) and "fast" (30 frames) into the two inputs of "add"
    /// (no latency) and on to output 1; the input straight to output 2. Ports "in"/"out", "add"'s
    /// "a", "b" and "sum".
    static func diamond() throws -> PluginGraph {
        var graph = PluginGraph(inputs: 1, outputs: 2)
        try graph.add(GraphNode(id: "slow", inputs: ["in"], outputs: ["out"], latency: 100))
        try graph.add(GraphNode(id: "fast", inputs: ["in"], outputs: ["out"], latency: 30))
        try graph.add(GraphNode(id: "add", inputs: ["a", "b"], outputs: ["sum"]))
        try graph.connect(.graphInput(0), to: .plugin(node: "slow", port: "in"))
        try graph.connect(.graphInput(0), to: .plugin(node: "fast", port: "in"))
        try graph.connect(.plugin(node: "slow", port: "out"), to: .plugin(node: "add", port: "a"))
        try graph.connect(.plugin(node: "fast", port: "out"), to: .plugin(node: "add", port: "b"))
        try graph.connect(.plugin(node: "add", port: "sum"), to: .graphOutput(0))
        try graph.connect(.graphInput(0), to: .graphOutput(1))
        return graph
    }
}
