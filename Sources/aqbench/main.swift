import AQJack
import Foundation
let watcher = try JackClient(name: "watcher")
watcher.notifications.onPortRegistration { n, r in print("REG", n, r) }
try watcher.activate()
print("active")
Thread.sleep(forTimeInterval: 1.0)
let other = try JackClient(name: "other")
let p = try other.registerPort("x", direction: .output)
Thread.sleep(forTimeInterval: 0.5)
try other.unregister(p)
Thread.sleep(forTimeInterval: 1.0)
print("done")
