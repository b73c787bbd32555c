import config from './config.js'

const canvas = document.getElementById('game')
const ctx = canvas.getContext('2d')
const ship = { x: canvas.width / 2, y: canvas.height - 40 }
const keys = new Set()
const stars = Array.from({ length: 60 }, () => ({ x: Math.random() * canvas.width, y: Math.random() * canvas.height }))

addEventListener('keydown', (e) => keys.add(e.key))
addEventListener('keyup', (e) => keys.delete(e.key))
document.getElementById('build').textContent = `build ${config.build}`

function frame() {
  if (keys.has('ArrowLeft')) ship.x = Math.max(12, ship.x - 4)
  if (keys.has('ArrowRight')) ship.x = Math.min(canvas.width - 12, ship.x + 4)
  ctx.clearRect(0, 0, canvas.width, canvas.height)
  ctx.fillStyle = '#8fa2ff'
  for (const star of stars) {
    star.y = (star.y + 1) % canvas.height
    ctx.fillRect(star.x, star.y, 2, 2)
  }
  ctx.fillStyle = '#ffcf5a'
  ctx.beginPath()
  ctx.moveTo(ship.x, ship.y - 14)
  ctx.lineTo(ship.x - 12, ship.y + 10)
  ctx.lineTo(ship.x + 12, ship.y + 10)
  ctx.fill()
  requestAnimationFrame(frame)
}
requestAnimationFrame(frame)
