// The image commands of the README and docs/helm.md are the ones the image's e2e tests run:
// `npm run image`, the image it tags (package version), and the chart values that run it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { IMAGE, ROOT } from '../../../scripts/image/build.ts';
import { imageValues } from '../../support/chart-pod.ts';

const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

t.test('README: npm run image, the image it prints, the chart values that run it', async (t) => {
  const readme = read('README.md');
  t.match(readme, /^npm ci && npm run image\b/m, 'npm run image');
  t.match(readme, `prints the image and its size: ${IMAGE} `, `${IMAGE} is what it prints`);
  for (const command of ['kind load docker-image', 'k3d image import', 'podman push']) t.match(readme, `${command} ${IMAGE}`, `${command} ${IMAGE}`);
  t.match(readme, imageValues(IMAGE).map((v) => `--set ${v}`).join(' '), 'helm install with the e2e tests\' values');
});

t.test('docs/helm.md: the chart values that run it', async (t) => {
  t.match(read('docs/helm.md'), imageValues(IMAGE).map((v) => `--set ${v}`).join(' '));
});

t.test('imageValues splits a repository with a registry port from its tag', async (t) => {
  t.same(imageValues('registry.local:5000/kaos/kaos-operator:1.2.3'), ['image.repository=registry.local:5000/kaos/kaos-operator', 'image.tag=1.2.3', 'image.pullPolicy=Never']);
  t.throws(() => imageValues('kaos-operator'), /not repository:tag/);
});
