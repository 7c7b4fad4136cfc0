'use strict';
// redfix's mocha reporter: each test's file, describe blocks, title,
// state and error, written as JSON to $REDFIX_REPORT when the run ends, in
// the shape of jest's --json report.
const fs = require('fs');

module.exports = function RedfixReporter(runner) {
  const files = new Map();
  const file = (name) => {
    const key = name || '';
    if (!files.has(key)) {
      files.set(key, { name: key, status: 'passed', message: '', assertionResults: [] });
    }
    return files.get(key);
  };
  // mocha filters its own frames out of a stack, and with them an error
  // line that names a file of its package: the message is put back.
  const stack = (err) => {
    if (!err) return '';
    const s = String(err.stack || '');
    const first = String(err.message || '').split('\n')[0];
    if (first && !s.includes(first)) return `${err.name || 'Error'}: ${err.message}\n${s}`;
    return s || String(err.message || err);
  };
  const add = (test, status, err) => {
    const path = test.titlePath();
    const r = file(test.file);
    r.assertionResults.push({
      ancestorTitles: path.slice(0, -1),
      title: path[path.length - 1],
      status,
      failureMessages: err ? [stack(err)] : [],
    });
    if (status === 'failed') r.status = 'failed';
  };
  runner.on('pass', (t) => add(t, 'passed'));
  runner.on('pending', (t) => add(t, 'pending'));
  runner.on('fail', (t, err) => {
    if (t.type === 'hook') {
      const r = file(t.file);
      r.status = 'failed';
      r.message += (r.message ? '\n' : '') + t.fullTitle() + '\n' + stack(err);
      return;
    }
    add(t, 'failed', err);
  });
  runner.once('end', () => {
    fs.writeFileSync(process.env.REDFIX_REPORT, JSON.stringify({ testResults: [...files.values()] }));
  });
};
