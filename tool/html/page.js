// SPDX-License-Identifier: GPL-2.0
// pktfilt's HTML page: the packets (report) or the two aligned trees
// (diff) from the JSON elements before this script; every name from the
// trace goes into the page as text (textContent, title), never as markup.
// The trees are drawn lazily: only the rows in view exist in the DOM.
(function () {
'use strict';
var D = document, RH = 18, FH = 17, INDENT = 14;

function el(tag, cls, text) {
	var e = D.createElement(tag);
	if (cls)
		e.className = cls;
	if (text !== undefined && text !== null)
		e.textContent = String(text);
	return e;
}
function add(p, c) { p.appendChild(c); return c; }
function json(e) { return JSON.parse(e.textContent); }
function us(ns) { return ns === null || ns < 0 ? '-' : (ns / 1000).toFixed(3) + ' us'; }
// ftrace's duration markers
function marker(ns) {
	return ns < 0 ? '' : ns >= 1e9 ? '$' : ns >= 1e8 ? '@' : ns >= 1e7 ? '*' :
	       ns >= 1e6 ? '#' : ns >= 1e5 ? '!' : ns >= 1e4 ? '+' : '';
}
// the SVG's colours: FNV-1a of the name
function colour(s) {
	var h = 2166136261, i;
	for (i = 0; i < s.length; i++) {
		h ^= s.charCodeAt(i) & 255;
		h = Math.imul(h, 16777619) >>> 0;
	}
	return 'rgb(' + (205 + h % 50) + ',' + ((h >>> 8) % 230) + ',' + ((h >>> 16) % 55) + ')';
}
function base(nm) { return nm.split(/[ .]/)[0]; }
function endpoint(h, a, p) {
	var ports = h.proto === 'tcp' || h.proto === 'udp';
	if (!ports)
		return a || '?';
	return a.indexOf(':') >= 0 ? '[' + a + ']:' + p : (a || '?') + ':' + p;
}
function tuple(h) {
	return (h.proto || '?') + ' ' + endpoint(h, h.saddr, h.sport) + ' -> ' +
	       endpoint(h, h.daddr, h.dport) + ' ifindex ' + h.ifindex;
}
function fate(h) {
	if (h.fate === 'dropped')
		return 'dropped: ' + h.reason + (h.dfunc ? ' in ' + h.dfunc : '');
	return h.fate === 'consumed' ? 'consumed' : 'fate unknown';
}
function fateSpan(h) { return el('span', h.fate || '', fate(h)); }

// A search: a glob (with * ? [...]) matches the whole name or the name
// without its " [module]", else a substring; case-sensitive.
function matcher(q) {
	var re = '', i, j, c, body, r;
	if (!q)
		return null;
	if (!/[*?[]/.test(q))
		return function (s) { return s.indexOf(q) >= 0; };
	for (i = 0; i < q.length; i++) {
		c = q.charAt(i);
		if (c === '*') {
			re += '.*';
		} else if (c === '?') {
			re += '.';
		} else if (c === '[' && (j = q.indexOf(']', i + 2)) > 0) {
			body = q.slice(i + 1, j).replace(/\\/g, '\\\\');
			if (body.charAt(0) === '!')
				body = '^' + body.slice(1);
			re += '[' + body + ']';
			i = j;
		} else {
			re += c.replace(/[.+^${}()|\\\/\[\]]/g, '\\$&');
		}
	}
	try {
		r = new RegExp('^(?:' + re + ')$');
	} catch (e) {
		return function () { return false; };
	}
	return function (s) { return r.test(s) || r.test(s.split(' ')[0]); };
}

// The tree of a flat pre-order list: @get(i) the name, @kids(i) the
// number of callees. Parent, end of subtree, depth of each.
function shape(n, get, kids) {
	var m = { n: n, name: new Array(n), par: new Int32Array(n),
		  end: new Int32Array(n), depth: new Int32Array(n),
		  nk: new Int32Array(n), maxd: 0 };
	var st = [], rem = new Int32Array(n), i, t;
	for (i = 0; i < n; i++) {
		while (st.length && rem[st[st.length - 1]] <= 0)
			m.end[st.pop()] = i;
		m.name[i] = String(get(i));
		m.nk[i] = rem[i] = kids(i) | 0;
		t = st.length ? st[st.length - 1] : -1;
		m.par[i] = t;
		if (t >= 0)
			rem[t]--;
		m.depth[i] = st.length;
		if (st.length > m.maxd)
			m.maxd = st.length;
		st.push(i);
	}
	while (st.length)
		m.end[st.pop()] = n;
	return m;
}

// A packet's graph: [NAME, DURATION or null, CALLEES, ...].
function model(g) {
	var n = g.length / 3 | 0, m, i, p, d;
	m = shape(n, function (i) { return g[3 * i]; },
		  function (i) { return g[3 * i + 2]; });
	m.dur = new Float64Array(n);
	m.self = new Float64Array(n);
	m.ew = new Float64Array(n);
	m.x = new Float64Array(n);
	m.fw = new Float64Array(n);
	var ksum = new Float64Array(n), esum = new Float64Array(n), cur = new Float64Array(n);
	for (i = 0; i < n; i++) {
		d = g[3 * i + 1];
		m.dur[i] = typeof d === 'number' ? d : -1;
	}
	// self time: the duration less the callees' (0 at least); the width
	// in the flame graph: the duration, or the callees' for a call that
	// did not return
	for (i = n - 1; i >= 0; i--) {
		m.ew[i] = m.dur[i] >= 0 ? m.dur[i] : esum[i];
		m.self[i] = m.dur[i] >= 0 ? Math.max(0, m.dur[i] - ksum[i]) : -1;
		p = m.par[i];
		if (p >= 0) {
			esum[p] += m.ew[i];
			ksum[p] += m.ew[i];
		}
	}
	if (n && !(m.ew[0] > 0))
		for (i = 0; i < n; i++)
			m.ew[i] = m.end[i] - i;	// no durations: calls count
	for (i = 0; i < n; i++) {
		p = m.par[i];
		if (p < 0) {
			m.x[i] = 0;
			m.fw[i] = m.ew[i];
		} else {
			m.x[i] = cur[p];
			m.fw[i] = Math.max(0, Math.min(m.ew[i], m.x[p] + m.fw[p] - cur[p]));
			cur[p] += m.fw[i];
		}
		cur[i] = m.x[i];
	}
	return m;
}

// Where the packet was dropped: the call the kernel named (func=), one
// with a kfree_skb among its callees first; -1 if not known.
var FREE = /^(kfree_skb|__kfree_skb|sk_skb_reason_drop|skb_release|dev_kfree_skb|__dev_kfree_skb)/;
function dropAt(m, h) {
	var i, j, first = -1;
	if (h.fate !== 'dropped')
		return -1;
	for (i = 0; h.dfunc && i < m.n; i++) {
		if (base(m.name[i]) !== h.dfunc)
			continue;
		if (first < 0)
			first = i;
		for (j = i + 1; j < m.end[i]; j = m.end[j])
			if (FREE.test(m.name[j]))
				return i;
	}
	if (first >= 0)
		return first;
	for (i = 0; i < m.n; i++)
		if (FREE.test(m.name[i]))
			return m.par[i] >= 0 ? m.par[i] : i;
	return -1;
}

// A tree drawn lazily in @box: @row(i, div) fills a node's row.
function VTree(box, m, row, onsel) {
	var t = this, rows = add(box, el('div', 'rows')), pending = false;
	t.m = m;
	t.open = new Uint8Array(m.n);
	t.sel = -1;
	t.cur = -1;
	t.vis = [];
	t.refresh = function () {
		var v = [], i;
		for (i = 0; i < m.n; i++) {
			v.push(i);
			if (!t.open[i])
				i = m.end[i] - 1;
		}
		t.vis = v;
		rows.style.height = v.length * RH + 'px';
		rows.style.minWidth = (m.maxd * INDENT + 760) + 'px';
		t.draw();
	};
	t.draw = function () {
		var first = Math.max(0, Math.floor(box.scrollTop / RH) - 10);
		var last = Math.min(t.vis.length, first + Math.ceil((box.clientHeight || 600) / RH) + 20);
		var k, i, r;
		rows.textContent = '';
		for (k = first; k < last; k++) {
			i = t.vis[k];
			r = el('div', 'row');
			r.style.top = k * RH + 'px';
			r.style.minWidth = '100%';
			r.dataset.i = i;
			if (i === t.sel)
				r.classList.add('sel');
			if (i === t.cur)
				r.classList.add('cur');
			row(i, r);
			rows.appendChild(r);
		}
	};
	box.addEventListener('scroll', function () {
		if (pending)
			return;
		pending = true;
		requestAnimationFrame(function () { pending = false; t.draw(); });
	});
	rows.addEventListener('click', function (ev) {
		var r = ev.target.closest('[data-i]'), i;
		if (!r)
			return;
		i = +r.dataset.i;
		if (ev.target.classList.contains('tw'))
			t.toggle(i);
		else
			t.select(i);
	});
	t.toggle = function (i) {
		if (m.nk[i]) {
			t.open[i] ^= 1;
			t.refresh();
		}
	};
	t.twisty = function (i) {
		return el('span', 'tw', m.nk[i] ? (t.open[i] ? '\u25be' : '\u25b8') : '');
	};
	t.indent = function (i) {
		var s = el('span');
		s.style.display = 'inline-block';
		s.style.width = m.depth[i] * INDENT + 'px';
		return s;
	};
	t.depth = function (d) {
		var i;
		for (i = 0; i < m.n; i++)
			t.open[i] = m.depth[i] < d ? 1 : 0;
		t.refresh();
	};
	t.reveal = function (i, noscroll) {
		var p, k;
		for (p = m.par[i]; p >= 0; p = m.par[p])
			t.open[p] = 1;
		t.refresh();
		if (noscroll)
			return;
		k = t.vis.indexOf(i);
		if (k * RH < box.scrollTop || (k + 1) * RH > box.scrollTop + box.clientHeight)
			box.scrollTop = Math.max(0, k * RH - box.clientHeight / 3);
		t.draw();
	};
	t.select = function (i) {
		var k, r;
		t.sel = i;
		// the rows stay (a double click needs the same element twice)
		for (k = 0; k < rows.children.length; k++) {
			r = rows.children[k];
			r.classList.toggle('sel', +r.dataset.i === i);
			r.classList.toggle('cur', +r.dataset.i === t.cur);
		}
		if (onsel)
			onsel(i);
	};
}

// Search box, counter, previous/next, over @names; @show(i, k, n)
function Search(bar, names, show, onhits) {
	var q = add(bar, el('input')), prev, next, count, hits = [], k = -1, timer;
	q.type = 'text';
	q.id = 'q';
	q.placeholder = 'search: name, or glob udp_*';
	prev = add(bar, el('button', '', '\u25c2 prev'));
	prev.id = 'prev';
	next = add(bar, el('button', '', 'next \u25b8'));
	next.id = 'next';
	count = add(bar, el('span', '', ''));
	count.id = 'count';
	var s = {
		flags: new Uint8Array(names().length),
		run: function () {
			var nm = names(), f = matcher(q.value), i;
			s.flags = new Uint8Array(nm.length);
			hits = [];
			k = -1;
			for (i = 0; f && i < nm.length; i++)
				if (f(nm[i])) {
					hits.push(i);
					s.flags[i] = 1;
				}
			count.textContent = f ? hits.length + ' match' + (hits.length === 1 ? '' : 'es') : '';
			count.dataset.n = f ? hits.length : '';
			onhits();
		},
		step: function (d) {
			if (!hits.length)
				return;
			k = k < 0 ? (d > 0 ? 0 : hits.length - 1) : (k + d + hits.length) % hits.length;
			count.textContent = (k + 1) + ' of ' + hits.length;
			count.dataset.n = hits.length;
			show(hits[k]);
		}
	};
	q.addEventListener('input', function () {
		clearTimeout(timer);
		timer = setTimeout(s.run, 120);
	});
	q.addEventListener('keydown', function (ev) {
		if (ev.key === 'Enter') {
			clearTimeout(timer);
			if (matcher(q.value) && !hits.length && k < 0)
				s.run();
			s.step(ev.shiftKey ? -1 : 1);
		}
	});
	prev.onclick = function () { s.step(-1); };
	next.onclick = function () { s.step(1); };
	return s;
}

// The icicle graph of @m in @box: click a frame to zoom (and select it
// in the tree), back and reset.
function Flame(box, m, onpick, flags) {
	var f = add(box, el('div')), hist = [], t = { zoom: 0, sel: -1, drop: -1 };
	f.id = 'flame';
	t.draw = function () {
		var W = Math.max(200, box.clientWidth - 2), z = t.zoom, scale, bx, i, w, a, n = 0;
		var hits = flags();
		f.textContent = '';
		if (!m.n)
			return;
		scale = W / (m.fw[z] || 1);
		bx = m.x[z];
		for (a = m.par[z]; a >= 0; a = m.par[a])
			frame(a, 0, W, 'anc');
		for (i = z; i < m.end[z]; i++) {
			w = m.fw[i] * scale;
			if (w < 0.5 && i !== z) {
				i = m.end[i] - 1;
				continue;
			}
			frame(i, (m.x[i] - bx) * scale, w, '');
			n++;
		}
		f.style.height = (m.maxd + 1) * FH + 'px';
		t.frames = n;
		function frame(i, x, w, cls) {
			var d = el('div', 'fr' + (cls ? ' ' + cls : ''), w > 28 ? m.name[i] : '');
			d.style.left = x + 'px';
			d.style.top = m.depth[i] * FH + 'px';
			d.style.width = Math.max(w, 1) + 'px';
			d.style.background = colour(m.name[i]);
			d.dataset.i = i;
			d.title = m.name[i] + ' (' + (m.dur[i] < 0 ? 'did not return' : us(m.dur[i])) + ', ' +
				  (100 * m.ew[i] / (m.ew[0] || 1)).toFixed(2) + '%)';
			if (hits[i])
				d.classList.add('hit');
			if (m.dur[i] < 0)
				d.classList.add('inc');
			if (i === t.drop)
				d.classList.add('drop');
			if (i === t.sel)
				d.classList.add('sel');
			f.appendChild(d);
		}
	};
	t.zoomTo = function (i) {
		if (i !== t.zoom) {
			hist.push(t.zoom);
			t.zoom = i;
		}
		t.draw();
	};
	t.back = function () {
		if (hist.length)
			t.zoom = hist.pop();
		t.draw();
	};
	t.reset = function () {
		hist = [];
		t.zoom = 0;
		t.draw();
	};
	t.depthOfHist = function () { return hist.length; };
	f.addEventListener('click', function (ev) {
		var d = ev.target.closest('[data-i]'), i;
		if (!d)
			return;
		i = +d.dataset.i;
		t.zoomTo(i);
		onpick(i);
	});
	return t;
}

function fail(e) {
	var p = add(D.body, el('pre', 'err', 'pktfilt page: ' + (e && e.stack || e)));
	p.id = 'error';
	throw e;
}

// --- report: the packet list, a packet's tree and flame graph -----------

function report(meta) {
	var heads = D.querySelectorAll('script.pf-h'), graphs = D.querySelectorAll('script.pf-g');
	var H = [], i, hd, main, list, rows, cur = -1, pending = false;
	hd = add(D.body, el('header'));
	add(hd, el('b', '', 'pktfilt'));
	add(hd, D.createTextNode(' ' + heads.length + ' packet' + (heads.length === 1 ? '' : 's') +
				 (meta.filter ? ', traced with ' + meta.filter : '')));
	main = add(D.body, el('main'));
	for (i = 0; i < heads.length; i++)
		H.push(json(heads[i]));
	// the list, drawn lazily too: only the rows in view
	var lh = add(main, el('div', 'pk ph'));
	['seq', 'stage', 'id', 'tuple', 'fate', 'duration', 'calls', ''].forEach(function (s) {
		add(lh, el('span', '', s));
	});
	list = add(main, el('div'));
	list.id = 'plist';
	list.style.height = Math.min(190, H.length * RH + 2) + 'px';
	rows = add(list, el('div', 'rows'));
	rows.style.height = H.length * RH + 'px';
	function drawList() {
		var first = Math.max(0, Math.floor(list.scrollTop / RH) - 5);
		var last = Math.min(H.length, first + Math.ceil(190 / RH) + 10), k, h, r;
		rows.textContent = '';
		for (k = first; k < last; k++) {
			h = H[k];
			r = add(rows, el('div', 'pk' + (k === cur ? ' on' : '')));
			r.style.top = k * RH + 'px';
			r.dataset.p = k;
			add(r, el('span', '', h.seq));
			add(r, el('span', '', h.stage || '?'));
			add(r, el('span', '', h.id));
			add(r, el('span', '', tuple(h)));
			add(add(r, el('span')), fateSpan(h));
			add(r, el('span', '', h.root === null ? 'no graph' : us(h.dur)));
			add(r, el('span', '', h.calls));
			add(r, el('span', 'inc', h.complete ? '' : 'INCOMPLETE: ' + h.incomplete));
			r.title = 'packet ' + h.seq + ': ' + tuple(h) + ', ' + fate(h) + (h.complete ? '' : ', INCOMPLETE: ' + h.incomplete);
		}
	}
	list.addEventListener('scroll', function () {
		if (pending)
			return;
		pending = true;
		requestAnimationFrame(function () { pending = false; drawList(); });
	});
	rows.addEventListener('click', function (ev) {
		var r = ev.target.closest('.pk');
		if (r)
			open(+r.dataset.p);
	});
	var view = add(main, el('div'));
	view.id = 'view';
	if (!heads.length)
		add(view, el('p', '', 'No packet in this trace (were events/pktfilt enabled?).'));
	function open(p) {
		cur = p;
		if (p * RH < list.scrollTop || (p + 1) * RH > list.scrollTop + list.clientHeight)
			list.scrollTop = p * RH;
		drawList();
		view.textContent = '';
		packet(view, H[p], json(graphs[p]));
		window.pktfilt.packets = H;
		window.pktfilt.open = open;
		window.pktfilt.current = p;
	}
	drawList();
	if (heads.length)
		open(0);
	else
		window.pktfilt = { packets: H, open: open, current: -1 };
}

function packet(view, h, g) {
	var m = model(g), ph, bar, det, box, fbar, fbox, tree, flame, srch, drop, top;
	window.pktfilt = { model: m };
	top = m.n ? (m.dur[0] >= 0 ? m.dur[0] : m.ew[0]) : 0;
	ph = add(view, el('div'));
	ph.id = 'phead';
	add(ph, el('b', '', 'packet ' + h.seq + ' (' + (h.stage || '?') + ', id ' + h.id + ')'));
	add(ph, D.createTextNode(': ' + tuple(h) + ' netns ' + h.netns + ' cpu ' + h.cpu + ', '));
	add(ph, fateSpan(h));
	add(ph, D.createTextNode(', ' + (h.root === null ? 'no graph' : us(h.dur) + ', ' + h.calls + ' calls')));
	if (!h.complete)
		add(ph, el('span', 'badge b-inc', 'INCOMPLETE: ' + h.incomplete +
			   (h.depthcut ? ' (calls deeper than 512 not kept)' : '')));
	if (!m.n)
		return;
	drop = dropAt(m, h);
	bar = add(view, el('div', 'bar'));
	srch = Search(bar, function () { return m.name; },
		      function (i) { tree.cur = i; tree.reveal(i); tree.select(i); },
		      function () { tree.cur = -1; tree.draw(); flame.draw(); });
	function btn(id, text, fn) {
		var b = add(bar, el('button', '', text));
		b.id = id;
		b.onclick = fn;
		return b;
	}
	btn('collapse', 'collapse all', function () { tree.depth(0); });
	var dn = add(bar, el('input'));
	dn.type = 'number';
	dn.id = 'depthn';
	dn.min = 1;
	dn.value = 3;
	btn('expdepth', 'expand to depth', function () { tree.depth(+dn.value || 1); });
	btn('expall', 'expand all', function () { tree.depth(1e9); });
	var tb = btn('todrop', 'path to the drop', function () { tree.reveal(drop); tree.select(drop); });
	if (drop < 0)
		tb.disabled = true;
	det = add(view, el('div', 'mono'));
	det.id = 'detail';
	det.textContent = 'click a call for its details, \u25b8 to open it, double-click to zoom the flame graph to it';
	box = add(view, el('div'));
	box.id = 'tree';
	tree = new VTree(box, m, function (i, r) {
		var sl = m.self[i] >= 0 && top > 0 && m.self[i] >= top / 20;
		if (sl)
			r.classList.add('slow');
		add(r, el('span', 'du', m.dur[i] < 0 ? '-' : us(m.dur[i])));
		add(r, el('span', 'se', m.self[i] < 0 ? '-' : us(m.self[i])));
		add(r, el('span', 'mk', marker(m.dur[i])));
		add(r, tree.indent(i));
		add(r, tree.twisty(i));
		add(r, el('span', 'fn' + (srch.flags[i] ? ' hit' : ''), m.name[i]));
		if (m.dur[i] < 0)
			add(r, el('span', 'badge b-inc', 'did not return'));
		if (i === drop)
			add(r, el('span', 'badge b-drop', fate(h)));
		if (i === 0 && h.fate === 'consumed')
			add(r, el('span', 'badge b-ok', 'consumed'));
		if (sl)
			add(r, el('span', 'badge b-slow', 'self ' + (100 * m.self[i] / top).toFixed(0) + '%'));
		if (i === 0 && !h.complete)
			add(r, el('span', 'badge b-inc', 'INCOMPLETE: ' + h.incomplete));
	}, function (i) {
		var p, path = [];
		for (p = m.par[i]; p >= 0; p = m.par[p])
			path.unshift(m.name[p]);
		det.textContent = m.name[i] + ': ' + (m.dur[i] < 0 ? 'did not return' : us(m.dur[i])) +
			', self ' + us(m.self[i]) + ', ' + (100 * m.ew[i] / (m.ew[0] || 1)).toFixed(2) +
			'% of the packet, ' + (m.end[i] - i) + ' call' + (m.end[i] - i === 1 ? '' : 's') +
			', depth ' + m.depth[i] + (path.length ? '; in ' + path.join(' > ') : '');
		flame.sel = i;
		flame.draw();
	});
	fbar = add(view, el('div', 'bar'));
	add(fbar, el('b', '', 'flame graph'));
	var zb = add(fbar, el('button', '', '\u25c2 back'));
	zb.id = 'zback';
	zb.onclick = function () { flame.back(); };
	var zr = add(fbar, el('button', '', 'reset zoom'));
	zr.id = 'zreset';
	zr.onclick = function () { flame.reset(); };
	add(fbar, el('span', 'legend', 'root on top, width = time, click a call to zoom to it and see it in the tree; ' +
		     'magenta: matches, hatched: did not return, red outline: the drop'));
	fbox = add(view, el('div'));
	fbox.id = 'flamebox';
	flame = Flame(fbox, m, function (i) {
		tree.reveal(i);
		tree.select(i);
	}, function () { return srch.flags; });
	flame.drop = drop;
	// a double click in the tree zooms the flame graph to the call
	box.addEventListener('dblclick', function (ev) {
		var r = ev.target.closest('[data-i]');
		if (r)
			flame.zoomTo(+r.dataset.i);
	});
	tree.depth(3);
	if (drop >= 0)
		tree.reveal(drop, true);
	flame.draw();
	window.pktfilt = { model: m, tree: tree, flame: flame, search: srch, drop: drop };
}

// --- diff: the two trees aligned, side by side -------------------------

function diff(meta) {
	var d = json(D.getElementById('pf-diff')), g = d.m.slice(1), n = g.length / 5 | 0, m, i, p, hd, main;
	m = shape(n, function (i) { return g[5 * i + 1]; }, function (i) { return g[5 * i + 4]; });
	m.op = new Uint8Array(n);
	m.da = new Float64Array(n);
	m.db = new Float64Array(n);
	m.dif = new Uint8Array(n);	// a difference in its subtree
	for (i = 0; i < n; i++) {
		m.op[i] = g[5 * i];
		m.da[i] = typeof g[5 * i + 2] === 'number' ? g[5 * i + 2] : -1;
		m.db[i] = typeof g[5 * i + 3] === 'number' ? g[5 * i + 3] : -1;
	}
	for (i = n - 1; i >= 0; i--) {
		if (m.op[i])
			m.dif[i] = 1;
		p = m.par[i];
		if (p >= 0 && m.dif[i])
			m.dif[p] = 1;
	}
	// a place: one-sided calls next to each other under a call both
	// made (or at the top), as the text diff counts them
	var places = [], prev = new Int32Array(n).fill(-1), last = {}, key;
	for (i = 0; i < n; i++) {
		key = m.par[i];
		if (key in last)
			prev[i] = last[key];
		last[key] = i;
		if (m.op[i] && (m.par[i] < 0 || !m.op[m.par[i]]) &&
		    (prev[i] < 0 || !m.op[prev[i]]))
			places.push(i);
	}
	// where each side was dropped: dropAt() over that side's calls
	function sideModel(side) {
		var idx = [], j;
		for (j = 0; j < n; j++)
			if (!m.op[j] || m.op[j] === side)
				idx.push(j);
		return idx;
	}
	var dropA = -1, dropB = -1;
	[1, 2].forEach(function (side) {
		var h = side === 1 ? d.a : d.b, idx, sub, at, k, map = {};
		if (h.fate !== 'dropped')
			return;
		idx = sideModel(side);
		var next = new Int32Array(n + 1);	// the side's first call at or after
		next[n] = idx.length;
		for (k = idx.length - 1; k >= 0; k--)
			map[idx[k]] = k;
		for (k = n - 1; k >= 0; k--)
			next[k] = k in map ? map[k] : next[k + 1];
		sub = { n: idx.length, name: idx.map(function (j) { return m.name[j]; }),
			par: idx.map(function (j) { return m.par[j] >= 0 ? map[m.par[j]] : -1; }),
			end: idx.map(function (j) { return next[m.end[j]]; }) };
		at = dropAt(sub, h);
		if (at >= 0) {
			if (side === 1)
				dropA = idx[at];
			else
				dropB = idx[at];
		}
	});
	function slower(i) {
		var a = m.da[i], b = m.db[i];
		if (m.op[i] || a < 0 || b < 0)
			return 0;
		if (b > a * 1.25 && b - a >= 1000)
			return 1;
		if (b < a * 0.8 && a - b >= 1000)
			return -1;
		return 0;
	}
	hd = add(D.body, el('header'));
	add(hd, el('b', '', 'pktfilt diff'));
	add(hd, D.createTextNode(' ' + (d.same ? 'the same path' : 'the packets differ')));
	main = add(D.body, el('main'));
	[['A', d.a, d.name_a], ['B', d.b, d.name_b]].forEach(function (s) {
		var p = add(main, el('div', 'mono'));
		add(p, el('b', '', s[0] + ': packet ' + s[1].seq + ' (' + (s[1].stage || '?') + ', id ' + s[1].id + ') of ' + s[2]));
		add(p, D.createTextNode(': ' + tuple(s[1]) + ', '));
		add(p, fateSpan(s[1]));
		add(p, D.createTextNode(', ' + (s[1].root === null ? 'no graph' : us(s[1].dur) + ', ' + s[1].calls + ' calls')));
		if (!s[1].complete)
			add(p, el('span', 'badge b-inc', 'INCOMPLETE: ' + s[1].incomplete));
	});
	var sum = add(main, el('div', 'mono'));
	sum.id = 'summary';
	sum.textContent = 'calls: ' + d.calls.common + ' in both, ' + d.calls.only_a + ' only in A, ' +
		d.calls.only_b + ' only in B' + (d.calls.places ? ', in ' + d.calls.places + ' place' +
		(d.calls.places === 1 ? '' : 's') : ': the same calls') +
		(d.same_fate ? '' : '; fate differs: A ' + fate(d.a) + ', B ' + fate(d.b)) +
		(d.same_stage ? '' : '; stage differs: A ' + d.a.stage + ', B ' + d.b.stage);
	var bar = add(main, el('div', 'bar')), tree, box, k = -1;
	var srch = Search(bar, function () { return m.name; },
			  function (i) { tree.cur = i; tree.reveal(i); tree.select(i); },
			  function () { tree.cur = -1; tree.draw(); });
	function btn(id, text, fn) {
		var b = add(bar, el('button', '', text));
		b.id = id;
		b.onclick = fn;
		return b;
	}
	btn('collapse', 'collapse all', function () { tree.depth(0); });
	btn('expdiff', 'expand the differences', expdiff);
	var pc = el('span', '', places.length + ' place' + (places.length === 1 ? '' : 's'));
	pc.id = 'places';
	btn('prevdiff', '\u25c2 prev place', function () { step(-1); });
	btn('nextdiff', 'next place \u25b8', function () { step(1); });
	add(bar, pc);
	add(main, el('div', 'legend', 'left A, right B; red: only in A, green: only in B; ' +
		     'B - A in red where B is slower (by 25% and 1 us or more), green where faster'));
	function step(s) {
		if (!places.length)
			return;
		k = k < 0 ? (s > 0 ? 0 : places.length - 1) : (k + s + places.length) % places.length;
		pc.textContent = (k + 1) + ' of ' + places.length + ' places';
		tree.reveal(places[k]);
		tree.select(places[k]);
	}
	function expdiff() {
		for (var i = 0; i < n; i++)
			tree.open[i] = m.dif[i] && !(m.op[i] && m.par[i] >= 0 && m.op[m.par[i]]) ? 1 : 0;
		tree.refresh();
	}
	box = add(main, el('div', 'dtree'));
	box.id = 'tree';
	tree = new VTree(box, m, function (i, r) {
		var o = m.op[i], sw = slower(i);
		r.classList.add('drow');
		[1, 2].forEach(function (side) {
			var c = add(r, el('div')), here = !o || o === side, du = side === 1 ? m.da[i] : m.db[i];
			if (!here) {
				c.className = 'gap';
				return;
			}
			if (o)
				c.className = o === 1 ? 'oa' : 'ob';
			add(c, el('span', 'du', du < 0 ? 'did not return' : us(du)));
			if (side === 2) {
				var dd = el('span', 'dd' + (sw > 0 ? ' slower' : sw < 0 ? ' faster' : ''),
					    !o && m.da[i] >= 0 && m.db[i] >= 0 ?
					    (m.db[i] >= m.da[i] ? '+' : '-') + us(Math.abs(m.db[i] - m.da[i])) : '');
				add(c, dd);
			}
			add(c, el('span', 'mk', o ? (o === 1 ? '-' : '+') : ''));
			add(c, tree.indent(i));
			add(c, tree.twisty(i));
			add(c, el('span', 'fn' + (srch.flags[i] ? ' hit' : ''), m.name[i]));
			if (du < 0)
				add(c, el('span', 'badge b-inc', 'did not return'));
			if (i === (side === 1 ? dropA : dropB))
				add(c, el('span', 'badge b-drop', fate(side === 1 ? d.a : d.b)));
		});
	}, null);
	box.style.height = '70vh';
	expdiff();
	[dropA, dropB].forEach(function (i) {
		if (i >= 0)
			tree.reveal(i, true);
	});
	window.pktfilt = { model: m, tree: tree, search: srch, places: places, drop: [dropA, dropB] };
}

try {
	var meta = json(D.getElementById('pf-meta'));
	if (meta.kind === 'diff')
		diff(meta);
	else
		report(meta);
	D.body.dataset.ready = '1';
} catch (e) {
	fail(e);
}
})();
