# twinbench's reference client: the real Godot 3.2 engine's HTTPRequest node, run headless
# (Debian's godot3-server) inside `twinbench shell`, timed the way the published benchmark times
# it: a clock read just before request() and just after the completion resumes the script, medians
# and quartiles over the measured rounds, warmups not counted, variants interleaved per round.
# Written for twinbench (scripts/godot-reference.sh, docs/real-clients.md).
#
# Arguments after "--", each key=value:
#   url=http://198.18.0.2:8927   the server (default: $TWINBENCH_SERVER_URL)
#   out=FILE                     the CSV written (the published format plus min/q1/q3/max/runs)
#   scenario=latency|small_download|file_download   the CSV's scenario column; file_download
#                                streams the body to a file with 64 KiB chunks, as published
#   caps=0,120,60,30             frame caps (Engine.target_fps; 0 uncapped)
#   sizes=0,10240                body sizes (0: the ping endpoint)
#   variants=nat_coop,nat_thr    HTTPRequest cooperative, threaded (use_threads)
#   runs=25 warmups=3            measured and warmup rounds per cell
#   node=fresh|reused            a new HTTPRequest node per request, or one per variant and cell
#   start=completion|idle_frame  the next request from the completion handler (the published
#                                benchmark.gd), or after yield(get_tree(), "idle_frame")
extends SceneTree

var opts = {
	"url": OS.get_environment("TWINBENCH_SERVER_URL"),
	"out": "godot3.csv",
	"scenario": "latency",
	"caps": "0,120,60,30",
	"sizes": "0",
	"variants": "nat_coop,nat_thr",
	"runs": "25",
	"warmups": "3",
	"node": "fresh",
	"start": "completion",
}
var nodes = {}  # variant -> the reused HTTPRequest (node=reused)
var download_dir = ""

func _init():
	for a in OS.get_cmdline_args():
		var at = a.find("=")
		if at > 0 and opts.has(a.substr(0, at)):
			opts[a.substr(0, at)] = a.substr(at + 1)
	call_deferred("_main")

func _ints(text):
	var out = []
	for part in text.split(",", false):
		out.append(int(part))
	return out

func _fail(message):
	printerr("benchmark.gd: ", message)
	quit(1)

func _main():
	var caps = _ints(opts["caps"])
	var sizes = _ints(opts["sizes"])
	var variants = opts["variants"].split(",", false)
	var runs = int(opts["runs"])
	var warmups = int(opts["warmups"])
	if opts["url"] == "":
		_fail("no url= and no $TWINBENCH_SERVER_URL")
		return
	download_dir = OS.get_user_data_dir()
	var lines = ["scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms,runs,median_frames"]
	for cap in caps:
		Engine.target_fps = cap
		for size in sizes:
			var ms = {}
			var frames = {}
			for v in variants:
				ms[v] = []
				frames[v] = []
			for r in range(warmups + runs):
				for v in variants:
					var sample = yield(_one(v, size), "completed")
					if sample == null:
						return
					if r >= warmups:
						ms[v].append(sample[0])
						frames[v].append(sample[1])
			for v in variants:
				var s = _summary(ms[v])
				var f = _summary(frames[v])
				lines.append("%s,%d,%d,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%.1f" % [opts["scenario"], cap, size, v, s[2], s[0], s[1], s[3], s[4], runs, f[2]])
				printerr("benchmark.gd: %s %d fps %d B %s: median %.1f ms, %.1f frames" % [opts["scenario"], cap, size, v, s[2], f[2]])
			for v in nodes:
				nodes[v].queue_free()
			nodes.clear()
	var file = File.new()
	if file.open(opts["out"], File.WRITE) != OK:
		_fail("cannot write " + opts["out"])
		return
	for line in lines:
		file.store_line(line)
	file.close()
	quit(0)

# One request of `variant` for `size` bytes: [ms, frames], or null after a failure (quit(1)).
func _one(variant, size):
	var http = nodes.get(variant)
	if http == null:
		http = HTTPRequest.new()
		http.use_threads = variant.ends_with("_thr")
		if opts["scenario"] == "file_download":
			http.download_chunk_size = 65536
		root.add_child(http)
		if opts["node"] == "reused":
			nodes[variant] = http
	var target = "/api/benchmark/ping/" if size == 0 else "/api/benchmark/download/%d/" % size
	if opts["scenario"] == "file_download":
		http.download_file = download_dir + "/download.bin"
	if opts["start"] == "idle_frame":
		yield(self, "idle_frame")
	var frame0 = Engine.get_idle_frames()
	var t0 = OS.get_ticks_usec()
	var err = http.request(opts["url"] + target)
	if err != OK:
		_fail("request %s: error %d" % [target, err])
		return null
	var done = yield(http, "request_completed")  # [result, code, headers, body]
	var elapsed_ms = (OS.get_ticks_usec() - t0) / 1000.0
	var frames = Engine.get_idle_frames() - frame0
	if opts["node"] != "reused":
		http.queue_free()
	if done[0] != HTTPRequest.RESULT_SUCCESS or done[1] != 200:
		_fail("%s: result %d, HTTP %d" % [target, done[0], done[1]])
		return null
	if size > 0 and opts["scenario"] != "file_download" and done[3].size() != size:
		_fail("%s: %d bytes, expected %d" % [target, done[3].size(), size])
		return null
	return [elapsed_ms, frames]

# [min, q1, median, q3, max], quartiles linearly interpolated at q*(n-1) (the published method).
func _summary(values):
	var v = values.duplicate()
	v.sort()
	var out = []
	for q in [0.0, 0.25, 0.5, 0.75, 1.0]:
		var pos = q * (v.size() - 1)
		var lo = int(floor(pos))
		var hi = min(lo + 1, v.size() - 1)
		out.append(v[lo] + (v[hi] - v[lo]) * (pos - lo))
	return out
