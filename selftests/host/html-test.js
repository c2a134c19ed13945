// SPDX-License-Identifier: GPL-2.0
//
// The browser half of selftests/host/html-test: opens the pages it made
// in headless Chromium (puppeteer-core, Debian's /usr/bin/chromium) and
// works them as a user would. Prints "ok"/"not ok" lines; the shell half
// counts them.
//
//   node html-test.js WORKDIR IMGDIR
//
// WORKDIR holds the pages and, for each, the counts the shell computed
// from the text renderings (expect.json).
'use strict';
const path = require('path');
const fs = require('fs');
const puppeteer = require('puppeteer-core');

const work = process.argv[2], imgdir = process.argv[3];
const expect = JSON.parse(fs.readFileSync(path.join(work, 'expect.json'), 'utf8'));
let failed = 0;
function ok(cond, what, detail) {
	if (cond) {
		console.log('ok - ' + what);
	} else {
		failed++;
		console.log('not ok - ' + what);
		if (detail !== undefined)
			console.log(String(detail).split('\n').map((l) => '#   ' + l).join('\n'));
	}
	return cond;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function open(browser, file, w, h, answer) {
	const page = await browser.newPage();
	const problems = [], requests = [];
	await page.setViewport({ width: w || 1100, height: h || 760 });
	page.on('console', (m) => {
		if (m.type() === 'error' || m.type() === 'warning' || m.type() === 'assert')
			problems.push('console ' + m.type() + ': ' + m.text());
	});
	page.on('pageerror', (e) => problems.push('page error: ' + e.message));
	page.on('dialog', async (d) => {
		if (answer !== undefined && d.type() === 'prompt')
			return d.accept(answer);
		problems.push('dialog: ' + d.message());
		await d.dismiss();
	});
	page.on('request', (r) => requests.push(r.url()));
	const url = 'file://' + path.join(work, file);
	await page.goto(url, { waitUntil: 'load' });
	if (!/\.svg$/.test(file))
		await page.waitForSelector('body[data-ready="1"], #error', { timeout: 10000 });
	page.pf = { problems, requests, url, file };
	return page;
}

// No console error, page error or dialog; nothing fetched but the page.
function clean(page) {
	const others = page.pf.requests.filter((u) => u !== page.pf.url);
	ok(!page.pf.problems.length, page.pf.file + ': no console error, page error or dialog',
	   page.pf.problems.join('\n'));
	ok(!others.length, page.pf.file + ': nothing fetched but the page itself', others.join('\n'));
}

async function shot(page, name) {
	const file = path.join(imgdir, name);
	await page.screenshot({ path: file });
	const size = fs.statSync(file).size;
	ok(size > 5000 && size < 400000, 'screenshot ' + name + ' (' + size + ' bytes)');
}

const vis = (page) => page.evaluate(() => window.pktfilt.tree.vis.length);

async function search(page, q) {
	await page.click('#q', { clickCount: 3 });
	await page.keyboard.press('Backspace');
	await page.type('#q', q);
	await page.waitForFunction(() => document.getElementById('count').dataset.n !== '', { timeout: 5000 });
	await sleep(200);
	return page.evaluate(() => +document.getElementById('count').dataset.n);
}

async function report(browser) {
	const e = expect.report;
	const page = await open(browser, e.page);
	ok(!(await page.$('#error')), e.page + ': the script ran');
	const npk = await page.evaluate(() => window.pktfilt.packets.length);
	ok(npk === e.packets, e.page + ': the packet list has ' + e.packets + ' packets', 'saw ' + npk);
	const calls = await page.evaluate(() => window.pktfilt.model.n);
	ok(calls === e.calls, 'packet 1 has ' + e.calls + ' calls (as the text has lines of calls)', 'saw ' + calls);

	// expand a closed node with callees, then collapse it
	const before = await vis(page);
	const tw = await page.evaluateHandle(() => {
		const t = window.pktfilt.tree, m = window.pktfilt.model;
		for (const r of document.querySelectorAll('#tree .row')) {
			const i = +r.dataset.i;
			if (m.nk[i] && !t.open[i])
				return r.querySelector('.tw');
		}
		return null;
	});
	ok(!!(await tw.jsonValue()), 'a closed call with callees is in view');
	await tw.click();
	const opened = await vis(page);
	ok(opened > before, 'clicking its \u25b8 expands it (' + before + ' -> ' + opened + ' rows)');
	const tw2 = await page.evaluateHandle((n) => {
		const t = window.pktfilt.tree, m = window.pktfilt.model;
		for (const r of document.querySelectorAll('#tree .row')) {
			const i = +r.dataset.i;
			if (m.nk[i] && t.open[i] && m.depth[i] === 2 && r.querySelector('.tw').textContent === '\u25be')
				return r.querySelector('.tw');
		}
		return null;
	}, before);
	await tw2.click();
	const closed = await vis(page);
	ok(closed < opened, 'clicking its \u25be collapses it (' + opened + ' -> ' + closed + ' rows)');
	const rowsInDom = await page.$$eval('#tree .row', (r) => r.length);
	ok(rowsInDom <= closed && rowsInDom < 100, 'only the rows in view are in the DOM (' + rowsInDom + ')');

	// search, substring and glob, against the counts of the text rendering
	for (const s of e.searches) {
		const n = await search(page, s.q);
		ok(n === s.n, 'search "' + s.q + '": ' + s.n + ' matches, as grep counts in the text', 'page says ' + n);
	}
	const q = e.searches[0].q;
	await search(page, q);
	await page.click('#next');
	await page.click('#next');
	const cur = await page.evaluate(() => {
		const r = document.querySelector('#tree .row.cur');
		return r ? { name: r.querySelector('.fn').textContent, hit: r.querySelector('.fn').classList.contains('hit'),
			     count: document.getElementById('count').textContent } : null;
	});
	ok(cur && cur.name.indexOf(q) >= 0 && cur.hit && /^2 of /.test(cur.count),
	   'next, next: the second match is shown, highlighted, its path open', JSON.stringify(cur));
	const qn = await search(page, e.searches[1].q);
	await page.click('#prev');
	const last = await page.evaluate(() => document.getElementById('count').textContent);
	ok(last === qn + ' of ' + qn, 'prev after a new search: the last match', last);
	await search(page, q);
	await page.click('#next');
	const fhits = await page.$$eval('#flame .fr.hit', (f) => f.length);
	ok(fhits > 0, 'the matches are highlighted in the flame graph too (' + fhits + ' frames)');
	await shot(page, 'html-report.png');

	// the flame graph: click a frame, it zooms and is selected in the tree
	const target = await page.evaluate(() => {
		const m = window.pktfilt.model;
		let best = -1;
		for (const f of document.querySelectorAll('#flame .fr:not(.anc)')) {
			const i = +f.dataset.i;
			if (m.depth[i] >= 2 && m.nk[i] && f.getBoundingClientRect().width > 40 && (best < 0 || m.depth[i] > m.depth[best]))
				best = i;
		}
		return best;
	});
	ok(target > 0, 'a frame to zoom to (call ' + target + ')');
	const fr = await page.$('#flame .fr[data-i="' + target + '"]');
	await fr.evaluate((f) => f.scrollIntoView());
	await fr.click();
	const z = await page.evaluate(() => ({ zoom: window.pktfilt.flame.zoom, sel: window.pktfilt.tree.sel,
		rowsel: !!document.querySelector('#tree .row.sel'),
		width: document.querySelector('#flame .fr[data-i="' + window.pktfilt.flame.zoom + '"]').getBoundingClientRect().width,
		box: document.getElementById('flamebox').clientWidth }));
	ok(z.zoom === target && z.width >= z.box - 4, 'clicking the frame zooms to it (now ' + Math.round(z.width) + ' px wide)',
	   JSON.stringify(z));
	ok(z.sel === target && z.rowsel, 'and reveals and selects it in the tree', JSON.stringify(z));
	await shot(page, 'html-flame-zoom.png');
	await page.click('#zback');
	const back = await page.evaluate(() => window.pktfilt.flame.zoom);
	ok(back === 0, 'back zooms out to the root', 'zoom ' + back);
	const row = await page.$('#tree .row[data-i="' + target + '"] .fn');
	await row.click({ count: 2 });
	const dz = await page.evaluate(() => window.pktfilt.flame.zoom);
	ok(dz === target, 'a double click on its row in the tree zooms to it again', 'zoom ' + dz);
	clean(page);
	await page.close();
}

// The SVG (--svg): flamegraph.pl's click to zoom and search with a count.
async function svg(browser) {
	const e = expect.svg;
	const page = await open(browser, e.page, 1220, 900, e.q);
	const n = await page.$$eval('g.packet > g', (g) => g.length);
	ok(n === e.calls, e.page + ': ' + e.calls + ' calls drawn', 'saw ' + n);
	const t = await page.evaluate(() => {
		let best = null;
		for (const g of document.querySelectorAll('g.packet > g')) {
			const r = g.querySelector('rect'), w = +r.getAttribute('width'), y = +r.getAttribute('y');
			const b = r.getBoundingClientRect();
			if (w > 60 && w < 400 && b.bottom < 880 && (!best || y > best.y))
				best = { g, y, w, x: +r.getAttribute('x'), cx: b.left + b.width / 2, cy: b.top + b.height / 2 };
		}
		if (!best)
			return null;
		best.g.setAttribute('data-target', '1');
		delete best.g;
		return best;
	});
	ok(!!t, 'a call to zoom to', JSON.stringify(t));
	const sel = 'g[data-target] > rect';
	await page.mouse.click(t.cx, t.cy);
	const z = await page.evaluate((sel) => {
		const r = document.querySelector(sel);
		const hidden = [...document.querySelectorAll('g.packet > g')].filter((g) => g.style.display === 'none').length;
		return { x: +r.getAttribute('x'), w: +r.getAttribute('width'), hidden };
	}, sel);
	ok(Math.abs(z.w - 1180) < 1 && z.x === 10 && z.hidden > 0,
	   'clicking it zooms to it: full width, ' + z.hidden + ' calls outside it hidden', JSON.stringify(z));
	const ub = await page.$eval('#unzoom', (u) => { const b = u.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; });
	await page.mouse.click(ub[0], ub[1]);
	const u = await page.evaluate((sel) => ({ w: +document.querySelector(sel).getAttribute('width'),
		hidden: [...document.querySelectorAll('g.packet > g')].filter((g) => g.style.display === 'none').length }), sel);
	ok(Math.abs(u.w - t.w) < 0.01 && u.hidden === 0, 'Reset zoom: back to ' + t.w + ' px, nothing hidden', JSON.stringify(u));
	const sb = await page.$eval('#search', (u) => { const b = u.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; });
	await page.mouse.click(sb[0], sb[1]);
	await page.waitForFunction(() => document.getElementById('matched').textContent !== '', { timeout: 5000 });
	const m = await page.evaluate(() => ({ text: document.getElementById('matched').textContent,
		magenta: document.querySelectorAll('rect[fill="rgb(230,0,230)"]').length }));
	ok(m.text === 'Matched: ' + e.n + ' of ' + e.calls + ' calls' && m.magenta === e.n,
	   'Search "' + e.q + '": ' + e.n + ' matches counted and highlighted, as grep counts', JSON.stringify(m));
	await page.mouse.click(t.cx, t.cy);
	await shot(page, 'svg-zoom.png');
	clean(page);
	await page.close();
}

async function drop(browser) {
	const e = expect.drop;
	const page = await open(browser, e.page);
	await page.click('#plist .pk[data-p="' + (e.index - 1) + '"]');
	await page.waitForSelector('#todrop');
	const dis = await page.$eval('#todrop', (b) => b.disabled);
	ok(!dis, 'a dropped packet: "path to the drop" is on');
	await page.click('#collapse');
	await page.click('#todrop');
	const s = await page.evaluate(() => {
		const r = document.querySelector('#tree .row.sel');
		return r ? { name: r.querySelector('.fn').textContent, badge: (r.querySelector('.b-drop') || {}).textContent } : null;
	});
	ok(s && s.name.split(/[ .]/)[0] === e.func && s.badge === e.fate,
	   'it opens the path to ' + e.func + ', marked "' + e.fate + '"', JSON.stringify(s));
	await shot(page, 'html-drop.png');
	clean(page);
	await page.close();
}

async function incomplete(browser) {
	const e = expect.incomplete;
	const page = await open(browser, e.page);
	const n = await page.evaluate(() => window.pktfilt.packets.filter((h) => !h.complete).length);
	const shown = await page.$$eval('#plist .pk .inc', (t) => t.filter((x) => /INCOMPLETE/.test(x.textContent)).length);
	ok(shown > 0, e.page + ': the list marks them INCOMPLETE (' + shown + ' in view)');
	ok(n === e.packets, e.page + ': ' + e.packets + ' packets marked INCOMPLETE in the list', 'saw ' + n);
	await page.click('#plist .pk[data-p="' + (e.index - 1) + '"]');
	const r = await page.evaluate(() => ({
		head: document.querySelector('#phead .b-inc') ? document.querySelector('#phead .b-inc').textContent : null,
		nret: (() => { const m = window.pktfilt.model; let k = 0; for (let i = 0; i < m.n; i++) if (m.dur[i] < 0) k++; return k; })(),
		badge: (() => {
			const m = window.pktfilt.model;
			let i = 0;
			while (i < m.n && m.dur[i] >= 0)
				i++;
			window.pktfilt.tree.reveal(i);
			return [...document.querySelectorAll('#tree .row[data-i="' + i + '"] .b-inc')].map((b) => b.textContent);
		})()
	}));
	ok(r.head && /INCOMPLETE: /.test(r.head) && r.badge.indexOf('did not return') >= 0 && r.nret > 0,
	   'its packet ' + e.index + ': INCOMPLETE in its header, ' + r.nret + ' calls marked "did not return"', JSON.stringify(r));
	clean(page);
	await page.close();
}

async function nothing(browser) {
	for (const f of ['nograph.html', 'empty.html']) {
		const page = await open(browser, f);
		const r = await page.evaluate(() => ({ ready: document.body.dataset.ready,
			text: (document.getElementById('phead') || document.getElementById('view')).textContent }));
		ok(r.ready === '1' && /no graph|No packet/.test(r.text), f + ': the page says "' +
		   (/no graph/.test(r.text) ? 'no graph' : 'No packet') + '"', JSON.stringify(r));
		clean(page);
		await page.close();
	}
}

async function hostile(browser) {
	const e = expect.hostile;
	const page = await open(browser, e.page);
	const r = await page.evaluate(() => ({
		scripts: document.scripts.length,
		name: [...document.querySelectorAll('#tree .fn')].map((x) => x.textContent).filter((t) => t.indexOf('<') >= 0),
		pwned: !!window.pwned
	}));
	ok(r.scripts === e.scripts && !r.pwned, 'a function named ' + e.name + ' stays data: ' + r.scripts + ' script elements, none run',
	   JSON.stringify(r));
	ok(r.name.indexOf(e.name) >= 0, 'and it shows as text in the tree', JSON.stringify(r.name));
	const n = await search(page, '</script>');
	ok(n === 1, 'search finds it once', 'page says ' + n);
	clean(page);
	await page.close();
}

const fcp = (page) => page.evaluate(() => new Promise((res) => {
	new PerformanceObserver((l) => {
		for (const e of l.getEntries())
			if (e.name === 'first-contentful-paint')
				res(e.startTime);
	}).observe({ type: 'paint', buffered: true });
	setTimeout(() => res(-1), 5000);
}));

async function big(browser) {
	const e = expect.big;
	// the best of two, and an empty page's for scale: this machine may be busy
	let p0 = await open(browser, e.page), first = await fcp(p0);
	await p0.close();
	p0 = await open(browser, 'empty.html');
	const empty = await fcp(p0);
	await p0.close();
	const page = await open(browser, e.page);
	const t = await page.evaluate(() => new Promise((res) => {
		const nav = performance.getEntriesByType('navigation')[0];
		const done = (fcp) => res({ fcp, load: nav ? nav.loadEventEnd : -1, calls: window.pktfilt.model.n });
		new PerformanceObserver((l) => {
			for (const e of l.getEntries())
				if (e.name === 'first-contentful-paint')
					done(e.startTime);
		}).observe({ type: 'paint', buffered: true });
		setTimeout(() => done(-1), 5000);
	}));
	ok(t.calls === e.calls, e.page + ': ' + e.calls + ' calls in the packet', JSON.stringify(t));
	t.fcp = first > 0 && (first < t.fcp || t.fcp < 0) ? first : t.fcp;
	ok(t.fcp > 0 && t.fcp < 1000, e.page + ' (' + e.calls + ' calls, ' + e.bytes + ' bytes): first paint ' +
	   Math.round(t.fcp) + ' ms (< 1000; best of 2; an empty page\'s: ' + Math.round(empty) + ' ms)', JSON.stringify(t));
	const t0 = Date.now();
	await page.click('#expall');
	const rows = await vis(page);
	const dt = Date.now() - t0;
	ok(rows === e.calls && dt < 1000, 'expand all: ' + rows + ' rows in ' + dt + ' ms', JSON.stringify({ rows, dt }));
	clean(page);
	await page.close();
}

async function diff(browser) {
	const e = expect.diff;
	const page = await open(browser, e.page, 1300, 760);
	ok(!(await page.$('#error')), e.page + ': the script ran');
	const sum = await page.$eval('#summary', (s) => s.textContent);
	ok(sum.indexOf('calls: ' + e.calls) === 0, 'the summary says "' + e.calls + '", as the text diff', sum);
	const r = await page.evaluate(() => {
		const m = window.pktfilt.model;
		let a = 0, b = 0, both = 0;
		for (let i = 0; i < m.n; i++)
			if (m.op[i] === 1) a++; else if (m.op[i] === 2) b++; else both++;
		return { a, b, both, places: window.pktfilt.places.length,
			 gaps: document.querySelectorAll('#tree .gap').length,
			 oa: document.querySelectorAll('#tree .oa').length, ob: document.querySelectorAll('#tree .ob').length };
	});
	ok(r.both === e.common && r.a === e.only_a && r.b === e.only_b,
	   'the aligned rows: ' + e.common + ' in both, ' + e.only_a + ' only A, ' + e.only_b + ' only B, as the text diff counts',
	   JSON.stringify(r));
	ok(r.places === e.places, e.places + ' places, as the text diff', JSON.stringify(r));
	ok(r.gaps > 0 && (r.oa > 0 || r.ob > 0), 'one-sided calls are shown against a gap (' + r.gaps + ' in view)');
	await page.click('#nextdiff');
	const s = await page.evaluate(() => {
		const m = window.pktfilt.model, t = window.pktfilt.tree;
		return { sel: t.sel, op: t.sel >= 0 ? m.op[t.sel] : -1, text: document.getElementById('places').textContent,
			 row: !!document.querySelector('#tree .row.sel') };
	});
	ok(s.op > 0 && s.row && /^1 of /.test(s.text), 'next place: the first one-sided call is shown, selected', JSON.stringify(s));
	const dr = await page.evaluate(() => {
		const i = window.pktfilt.drop[1];
		window.pktfilt.tree.reveal(i);
		const r = document.querySelector('#tree .row[data-i="' + i + '"] .b-drop');
		return { i, name: i >= 0 ? window.pktfilt.model.name[i] : null, badge: r ? r.textContent : null };
	});
	ok(dr.badge === e.fate_b && dr.name.split(/[ .]/)[0] === e.drop_b,
	   'B\'s drop is marked at ' + e.drop_b + ': "' + e.fate_b + '"', JSON.stringify(dr));
	await page.click('#nextdiff');
	const slower = await page.$$eval('#tree .slower', (x) => x.length);
	ok(slower > 0, 'slower calls are marked (' + slower + ' in view)');
	await page.click('#collapse');
	const c = await vis(page);
	ok(c === 1, 'collapse all leaves the root', 'rows ' + c);
	await page.click('#expdiff');
	await shot(page, 'html-diff.png');
	clean(page);
	await page.close();
}

(async () => {
	let browser;
	try {
		browser = await puppeteer.launch({
			executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
			headless: true,
			userDataDir: path.join(work, 'profile'),
			args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
			       '--disable-background-networking', '--disable-component-update',
			       '--disable-sync', '--proxy-server=127.0.0.1:9', '--hide-scrollbars']
		});
		ok(true, 'chromium ' + (await browser.version()) + ' started');
		for (const t of [report, svg, drop, incomplete, nothing, hostile, big, diff]) {
			try {
				await t(browser);
			} catch (err) {
				ok(false, t.name + ': ' + err.message, err.stack);
			}
		}
	} catch (err) {
		ok(false, 'chromium runs', err.stack);
	} finally {
		if (browser)
			await browser.close();
	}
	process.exit(failed ? 1 : 0);
})();
